import { Options, type ChannelTypeEntry } from '../channel-type.ts';
import { SimulatorProvider } from './simulator.provider.ts';
import { SimulatorText } from './text.ts';

// One text simulator serves every simulator channel: it keeps nothing per channel.
const text = new SimulatorText();

export const simulatorChannel: ChannelTypeEntry = {
  type: 'simulator',
  summary: 'built in, no network: real image and video files, deterministic text',
  serves: ['text', 'image', 'video', 'avatar'],
  baseUrl: 'none',
  options: Options({}),
  taskProvider: ({ config, pricing }) => new SimulatorProvider({ latencyMs: config.simulatorLatencyMs, pricing }),
  textProvider: () => text,
  test: async (probe) => (await probe.text()) ?? 'the built-in simulator is always available',
};
