// The part of the configuration providers read: timeouts, answer caps, polling and the reference
// download rules. The process's Config has all of it; providers see nothing else of it.

export interface ReferenceRules {
  /** Bytes all reference downloads of a process hold in memory at once; beyond it they go to disk. */
  memoryBytes: number;
  /** Where downloads over the memory budget are spooled (a directory per process). */
  spoolDir: string;
  /** One download's whole time, head to last byte. */
  timeoutMs: number;
  /** A download that moves fewer bytes than this per second over a window is given up. */
  minBytesPerSecond: number;
  windowMs: number;
  /** Downloads one process runs at once, and per account. */
  downloads: number;
  downloadsPerAccount: number;
}

/** The address rules an outbound target (a callback, a caller's reference) is held to. */
export interface TargetRules {
  publicBaseUrl: string;
  webhook: { allowPrivate: boolean; ports: number[] | '*'; ownHosts: string[] };
}

export interface ProviderSettings extends TargetRules {
  upstreamTimeoutMs: number;
  /** An upstream answer read whole is cut off past this. */
  upstreamMaxAnswerBytes: number;
  simulatorLatencyMs: number;
  relayPollMs: number;
  upstreamTasks: { pollMs: number; maxPollMs: number; admissionRetryMs: number };
  references: ReferenceRules;
  files: { fetchAllowPrivate: boolean };
}
