import type { Channel } from '../../core/channel.ts';
import { ChatCompletionsText } from '../chat-completions/chat-completions.text.ts';

// Text on the OpenAI API: POST /v1/chat/completions with `Authorization: Bearer`, as the openai SDK
// sends it (the chat-completions type is the same protocol under its older name). Tools,
// tool_choice and response_format of a chat-completions caller pass through; the answer's usage
// (prompt_tokens, completion_tokens; streams ask for it with stream_options.include_usage) is billed.
export class OpenAIText extends ChatCompletionsText {
  protected override readonly takesResponses = true;

  constructor(channel: Channel, timeoutMs: number, headers: Record<string, string>) {
    // The channel's headers (its secret and organization/project included) are built by the entry.
    super({ ...channel, secret: null }, timeoutMs, headers);
  }
}
