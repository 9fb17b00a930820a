import type { WireFormat } from '../core/text/index.ts';
import { reportedTokens, type ReportedUsage } from '../modules/text/tokens.ts';
import { chatClasses } from './chat-completions/chat-completions.answers.ts';
import { geminiClasses } from './gemini/gemini.answers.ts';
import { messagesClasses } from './messages/messages.answers.ts';

// What an upstream's answer or stream event reports of the usage, class by class, in each format's
// place for it. A class reported as something else than a count is undefined: our count bills it
// (tokens.ts usageOf), never zero.

type J = Record<string, any>;

/** Responses usage: input_tokens is the whole prompt, its cached part split out. */
function responsesClasses(usage: J): ReportedUsage {
  const prompt = reportedTokens(usage.input_tokens);
  const cached = Math.min(reportedTokens(usage.input_tokens_details?.cached_tokens) ?? 0, prompt ?? Infinity);
  return {
    input: prompt === undefined ? undefined : prompt - cached,
    cache_read: cached,
    output: reportedTokens(usage.output_tokens),
    reasoning: reportedTokens(usage.output_tokens_details?.reasoning_tokens),
  };
}

export function reportedUsage(format: WireFormat, data: unknown): ReportedUsage | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const d = data as J;
  switch (format) {
    case 'messages': {
      const usage = d.usage ?? d.message?.usage;
      return usage && typeof usage === 'object' ? messagesClasses(usage) : undefined;
    }
    case 'chat':
      return d.usage && typeof d.usage === 'object' ? chatClasses(d.usage) : undefined;
    case 'gemini':
      return geminiClasses(d.usageMetadata);
    case 'responses': {
      const usage = d.usage ?? d.response?.usage;
      return usage && typeof usage === 'object' ? responsesClasses(usage) : undefined;
    }
  }
}
