import { isObject, type Json, type TextMessage, type TextRequest } from '../../core/text/index.ts';
import { FORMATS } from '../../formats/index.ts';
import { responseIdsOfItem } from '../../formats/responses/index.ts';
import type { AppContext } from '../../context.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import type { CachedKey } from '../../core/key.ts';
import type { Sticky } from '../text/wire-call.ts';
import { deleteExpiredResponses, findResponse, storeResponse, type StoredResponse } from './responses.repo.ts';

// previous_response_id and GET /v1/responses/{id} on every channel: the gateway keeps each answer
// stored with `store` (the Responses API's default) for RESPONSES_TTL_HOURS, per account, with the
// conversation up to it in the neutral model. A follow-up is that conversation plus its own input,
// sent to whichever channel serves it (translated, as that upstream holds no state of ours). An
// answer an `openai` channel's upstream keeps too (sent the caller's body, stored there) names that
// channel: its follow-ups go back to it as the caller wrote them, so the upstream continues from
// what it kept (reasoning the gateway never sees, its prompt cache); the conversation is still
// spelled out for the hold (the upstream bills it as input) and for any other channel, should that
// one no longer serve the call (text-routes.ts).

const SWEEP_BATCH = 100;
/** Every this many stores, one looks for expired answers (up to SWEEP_BATCH of them: ~6 per store). */
const SWEEP_EVERY = 16;
let storesSinceSweep = 0;

/**
 * The stored conversation: the turns before the answer. The answer's own turn is decoded from the
 * stored Response when a follow-up comes, rather than written a second time with every store (an
 * answer's text is most of the row). Rows written before that hold one array with the answer's turn.
 */
interface StoredTurns {
  turns: TextMessage[];
}

function conversationOf(stored: StoredResponse): TextMessage[] {
  const parsed = JSON.parse(stored.conversation) as TextMessage[] | StoredTurns;
  if (Array.isArray(parsed)) return parsed;
  const answer = FORMATS.responses.decodeAnswer(JSON.parse(stored.response));
  return [...parsed.turns, { role: 'assistant', content: answer.content }];
}

/** The vendor's answer to a previous_response_id it does not know (a 400, param named). */
const previousNotFound = (id: string) => badRequest(`Previous response with id '${id}' not found.`);

/** The caller's turns without the instructions (the Responses API does not carry them over). */
function turnsOf(request: TextRequest, body: Json): TextMessage[] {
  const first = request.messages[0];
  const instructed = typeof body.instructions === 'string' && body.instructions !== '' && first?.role === 'system';
  return instructed ? request.messages.slice(1) : request.messages;
}

/**
 * Puts the stored conversation before the request's own turns; a stranger's or an expired id is
 * refused. With the channel whose upstream keeps that response, and the request as it came.
 */
export async function continueFrom(ctx: AppContext, key: CachedKey, request: TextRequest, body: Json): Promise<boolean | Sticky> {
  const id = body.previous_response_id;
  if (typeof id !== 'string' || id === '') return false;
  const stored = await findResponse(ctx.db, key.user_id, id, Date.now());
  if (!stored) throw previousNotFound(id);
  // A copy before the changes below (they replace the request's fields, never change what they hold).
  const asSent = stored.channel_id === null ? undefined : { ...request };
  const earlier = conversationOf(stored);
  const instructions = request.messages.length > turnsOf(request, body).length ? request.messages.slice(0, 1) : [];
  request.messages = [...instructions, ...earlier, ...turnsOf(request, body)];
  // Every channel but the one that kept it is sent the conversation, not the id; the answer still names it (formats/responses/echo.ts).
  delete request.previousResponseId;
  request.continuedFrom = id;
  return asSent ? { channelId: stored.channel_id!, asSent } : true;
}

const isReference = (v: unknown): v is { type: 'item_reference'; id: string } => isObject(v) && v.type === 'item_reference' && typeof v.id === 'string';

/** Whether the input names items by reference (checked without a turn of the event loop: most calls have none). */
export const hasReferences = (body: Json): boolean => Array.isArray(body.input) && body.input.some(isReference);

/**
 * `item_reference` input items (the AI SDK's OpenAI provider sends them for the output of a stored
 * response, as it stores by default) become the items they name, from the answers the gateway keeps:
 * no other format has references, and an item id of ours says which response holds it. One not found
 * stays a reference (a 400 naming it).
 */
export async function resolveReferences(ctx: AppContext, key: CachedKey, body: Json): Promise<Json> {
  if (!Array.isArray(body.input)) return body;
  const outputs = new Map<string, unknown[]>();
  const now = Date.now();
  const outputOf = async (responseId: string): Promise<unknown[]> => {
    let output = outputs.get(responseId);
    if (!output) {
      const stored = await findResponse(ctx.db, key.user_id, responseId, now);
      const parsed = stored ? (JSON.parse(stored.response) as Json) : undefined;
      output = Array.isArray(parsed?.output) ? parsed.output : [];
      outputs.set(responseId, output);
    }
    return output;
  };
  const input: unknown[] = [];
  for (const item of body.input) {
    let found: unknown;
    if (isReference(item))
      for (const responseId of responseIdsOfItem(item.id)) {
        found = (await outputOf(responseId)).find((o) => isObject(o) && o.id === item.id);
        if (found) break;
      }
    input.push(found ?? item);
  }
  return { ...body, input };
}

/** Keeps an answer the caller asked to store, with the conversation that led to it and the channel whose upstream keeps it too (if one does). */
export async function keepAnswer(ctx: AppContext, key: CachedKey, request: TextRequest, body: Json, response: Json, keptBy: string | null): Promise<void> {
  if (body.store === false || typeof response.id !== 'string') return;
  // An answer that could not be continued from is not kept (a follow-up finds no such response).
  FORMATS.responses.decodeAnswer(response);
  const conversation: StoredTurns = { turns: turnsOf(request, body) };
  const now = Date.now();
  await storeResponse(ctx.db, { id: response.id, user_id: key.user_id, response: JSON.stringify(response), conversation: JSON.stringify(conversation), channel_id: keptBy, created_at: now, expires_at: now + ctx.config.responsesTtlMs });
  // Expired answers go a batch at a time, as new ones come: no timer, no scan of the whole table
  // (an expired answer is never read: findResponse asks for live ones).
  if (++storesSinceSweep < SWEEP_EVERY) return;
  storesSinceSweep = 0;
  await deleteExpiredResponses(ctx.db, now, SWEEP_BATCH);
}

/** GET /v1/responses/{id}: the stored Response object; another account's id is not found. */
export async function readResponse(ctx: AppContext, key: CachedKey, id: string): Promise<string> {
  const stored = await findResponse(ctx.db, key.user_id, id, Date.now());
  if (!stored) throw notFound(`No response with id '${id}' is stored for this account`);
  return stored.response;
}
