// The request settings a Response object shows back to its client (instructions, tools, reasoning, ...).
import type { Json, TextRequest } from '../../core/text/index.ts';
import { encodeRequest } from './encode-request.ts';

const ECHOED = ['instructions', 'max_output_tokens', 'parallel_tool_calls', 'previous_response_id', 'reasoning', 'temperature', 'text', 'tool_choice', 'tools', 'top_p', 'metadata', 'user'];

/** Read from the request as this format writes it, so the echo and an upstream body never disagree. */
export const responsesEcho = (req: TextRequest): Json => {
  const body = encodeRequest({ ...req, stop: undefined }, req.model);
  const echo: Json = { store: req.store ?? true };
  for (const k of ECHOED) if (body[k] !== undefined) echo[k] = body[k];
  // A follow-up the gateway continued goes upstream without the id; its answer names it all the same.
  if (req.continuedFrom) echo.previous_response_id = req.continuedFrom;
  return echo;
};
