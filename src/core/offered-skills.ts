/**
 * Which injected skills an engine actually offered the model. Each engine announces skills its own way (codex in a
 * developer message, claude in its system prompt and `Skill` tool, gemini in `activate_skill`'s enum, opencode in
 * its system prompt), but all of them put the skill's name into the model request that starts the turn; the
 * engines' own bookkeeping calls (titles, routers, token counts) carry none, so they are left out.
 */
import type { RecordedRequest } from '../model/index.js';

/** True for a real model call of the recorded requests (a wire request that is neither a side request nor refused). */
export function isModelCall(request: Pick<RecordedRequest, 'wire' | 'response_kind' | 'side_kind'>): boolean {
  return request.wire !== null && request.response_kind !== 'side' && !request.side_kind;
}

/** The injected skills named in the first real model request (side requests and refusals excluded). */
export function offeredSkills(
  injected: readonly string[],
  requests: readonly Pick<RecordedRequest, 'wire' | 'response_kind' | 'body' | 'side_kind'>[],
): string[] {
  const first = requests.find(isModelCall);
  if (!first) return [];
  const body = JSON.stringify(first.body ?? '');
  return injected.filter((name) =>
    new RegExp(`(^|[^A-Za-z0-9._-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9_-])`).test(body),
  );
}
