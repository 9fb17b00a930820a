import type { WireFormat } from '../core/text/index.ts';
import type { ReportedUsage } from '../lib/tokens/tokens.ts';
import { chatClasses } from './chat-completions/chat-completions.answers.ts';
import { geminiClasses } from './gemini/gemini.answers.ts';
import { messagesClasses, messagesStartClasses } from './messages/messages.answers.ts';

// What an upstream's answer or stream event reports of the usage, class by class, in each format's
// place for it. A class reported as something else than a count is undefined: our count bills it
// (tokens.ts usageOf), never zero.

type J = Record<string, any>;

/** Responses usage has chat's classes under other names: input_tokens is the whole prompt, its cached part inside. */
const responsesClasses = (usage: J): ReportedUsage =>
  chatClasses({
    prompt_tokens: usage.input_tokens,
    prompt_tokens_details: { cached_tokens: usage.input_tokens_details?.cached_tokens },
    completion_tokens: usage.output_tokens,
    completion_tokens_details: { reasoning_tokens: usage.output_tokens_details?.reasoning_tokens },
  });

export function reportedUsage(format: WireFormat, data: unknown): ReportedUsage | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const d = data as J;
  switch (format) {
    case 'messages': {
      if (d.type === 'message_start') return d.message?.usage && typeof d.message.usage === 'object' ? messagesStartClasses(d.message.usage) : undefined;
      return d.usage && typeof d.usage === 'object' ? messagesClasses(d.usage) : undefined;
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
