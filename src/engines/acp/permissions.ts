/**
 * The answer to an engine's `session/request_permission` over ACP (a provider's `transport: 'acp'`), from the query's
 * agent options; nobody is there to ask. In order:
 *
 * 1. a tool named in `disallowedTools` is rejected;
 * 2. a tool named in `allowedTools` is allowed;
 * 3. by `permissionMode`: `bypassPermissions` allows everything; `plan` and `normal` (a provider's `default`) allow
 *    only what reads (ACP kinds `read`, `search`, `think`) and reject the rest: nobody is there to ask.
 *
 * A tool is named by any of: its name in the request's `_meta` (`toolName`, at the top or one level down, as
 * adapters put it), its `toolCallId`'s prefix (gemini's `write_file__…`), its title or its ACP kind
 * (`edit`, `execute`, …). Allowing picks the `allow_once` option (else `allow_always`), rejecting `reject_once`
 * (else `reject_always`); without such an option the request is answered `cancelled`.
 */
import type { AgentOptions } from '../../protocol/index.js';
import { metaToolNames, toolIdPrefix } from './parse.js';

/** What the engine asked (the fields of ACP's `RequestPermissionRequest` that matter here). */
export interface PermissionQuestion {
  toolCall: {
    toolCallId?: string;
    title?: string | null;
    kind?: string | null;
    _meta?: Record<string, unknown> | null;
    rawInput?: unknown;
  };
  options: ReadonlyArray<{ optionId: string; kind: string; name?: string }>;
}

/** The harness's answer and why. */
export interface PermissionDecision {
  /** `allow` or `reject` by the policy; `cancelled` when no option fit (or the attempt is being canceled). */
  verdict: 'allow' | 'reject' | 'cancelled';
  /** The option picked, or null. */
  optionId: string | null;
  /** The names the tool was known by. */
  names: string[];
  /** The rule that decided, for the audit. */
  rule: string;
}

const READS = new Set(['read', 'search', 'think']);

/** Every name `toolCall` is known by (see the module comment). */
export function toolNamesOf(toolCall: PermissionQuestion['toolCall']): string[] {
  const names = new Set<string>(metaToolNames(toolCall._meta));
  const prefix = toolIdPrefix(toolCall.toolCallId);
  if (prefix) names.add(prefix);
  if (toolCall.title) names.add(toolCall.title);
  if (toolCall.kind) names.add(toolCall.kind);
  return [...names];
}

/** Decides one permission request from `options` (the query's agent options). */
export function decidePermission(question: PermissionQuestion, options: AgentOptions): PermissionDecision {
  const names = toolNamesOf(question.toolCall);
  const kind = question.toolCall.kind ?? 'other';
  const pick = (verdict: 'allow' | 'reject', rule: string): PermissionDecision => {
    const kinds = verdict === 'allow' ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
    for (const wanted of kinds) {
      const option = question.options.find((o) => o.kind === wanted);
      if (option) return { verdict, optionId: option.optionId, names, rule };
    }
    return { verdict: 'cancelled', optionId: null, names, rule: `${rule}; no ${verdict} option was offered` };
  };
  const denied = names.find((name) => options.disallowedTools.includes(name));
  if (denied) return pick('reject', `disallowedTools names ${denied}`);
  const allowed = names.find((name) => options.allowedTools.includes(name));
  if (allowed) return pick('allow', `allowedTools names ${allowed}`);
  switch (options.permissionMode) {
    case 'bypassPermissions':
      return pick('allow', 'permissionMode bypassPermissions');
    default:
      return READS.has(kind)
        ? pick('allow', `permissionMode ${options.permissionMode} allows kind ${kind}`)
        : pick('reject', `permissionMode ${options.permissionMode} rejects kind ${kind} (no one to ask)`);
  }
}
