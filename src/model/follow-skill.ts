/**
 * The skill-following stand-in (issue 45): a `follow_skill` turn makes the scripted model do what a skill says,
 * keyless. Once the engine has shown the model the skill's body (an instruction it injected, or the result of a tool
 * call that read the skill), the stand-in runs the body's fenced shell steps (```bash, ```sh, ```shell blocks, in
 * order) through the engine's own shell tool, then ends with the done marker. When the body is not shown, it first
 * asks the engine to load the skill its own way (the `use_skill` intent: the engine's skill tool, else `cat` of the
 * SKILL.md); if the body is still not shown, its final message says so ({@link SKILL_NOT_LOADED}) without the done
 * marker, so the attempt does not complete and the trial fails.
 *
 * Everything is read from the request the server received, so it works on every wire and engine: the body is a
 * string of the request (a tool result, an injected message) that carries the skill's signature — its front matter
 * `name:` line, an `name="<skill>"` attribute (gemini's `<activated_skill>`), or a `skills/<skill>` path next to a
 * fenced block (claude's "Base directory for this skill").
 */
import type { FollowSkillTurn, PlayedTurn } from './script.js';
import type { EngineToolTable } from './tool-table.js';

/** The code the stand-in's final message carries when the engine never showed it the skill's body. */
export const SKILL_NOT_LOADED = 'SKILL_NOT_LOADED';

/** What the stand-in reads of one request. */
export interface FollowSkillContext {
  /** Every string of the request body, depth first. */
  strings: readonly string[];
  /** The request body as JSON text. */
  text: string;
  /** The tool tables of the engines on the request's wire (their skill tools). */
  tools: readonly EngineToolTable[];
  /** True when the request names skill `name` before the model's first output (what the engine offered). */
  offered(name: string): boolean;
}

/** A regular expression source matching `value` literally. */
function literal(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A fenced shell block: ```bash / ```sh / ```shell (or ~~~), up to its closing fence. */
const FENCE_SOURCE =
  '^[ \\t]*(`{3,}|~{3,})[ \\t]*(?:bash|sh|shell)(?:[ \\t][^\\n]*)?\\n([\\s\\S]*?)^[ \\t]*\\1[ \\t]*$';
/** Whether a text holds a fenced shell block (no `g` flag: no `lastIndex` state shared between calls). */
const HAS_FENCE = new RegExp(FENCE_SOURCE, 'm');

/** The fenced shell steps of a skill body, in order, each block one step (empty blocks skipped). */
export function skillShellSteps(body: string): string[] {
  return [...body.matchAll(new RegExp(FENCE_SOURCE, 'gm'))]
    .map((m) => m[2]!.replace(/\n$/, ''))
    .filter((step) => step.trim() !== '');
}

/** The request string holding skill `name`'s body, or null when the engine has not shown it. */
export function shownSkillBody(strings: readonly string[], name: string): string | null {
  const n = literal(name);
  const frontMatter = new RegExp(`^name:[ \\t]*["']?${n}["']?[ \\t]*$`, 'm');
  const attribute = new RegExp(`name=["']${n}["']`);
  const path = new RegExp(`skills/${n}(?:/|\\b)`);
  for (const text of strings) {
    if (frontMatter.test(text) || attribute.test(text)) return text;
    if (path.test(text) && HAS_FENCE.test(text)) return text;
  }
  return null;
}

/** The `use_skill` shell command, the same as the intent's (kept here to avoid an import cycle). */
function readCommand(name: string): string {
  return `cat .*/skills/${name}/SKILL.md`;
}

/** True when the request's history holds a call that loads skill `name` (the skill tool's, or the shell read). */
function readIssued(context: FollowSkillContext, name: string): boolean {
  if (context.text.includes(readCommand(name))) return true;
  return context.tools.some((table) => {
    if (!table.skill) return false;
    const arg = `"${table.skill.nameKey}":"${name}"`;
    return context.text.includes(arg) || context.text.includes(JSON.stringify(arg).slice(1, -1));
  });
}

/**
 * The plain turns a `follow_skill` turn stands for in this request; `position` is the index, within them, of the turn
 * the request asks for. The expansion is the same in every request of an attempt: [read?], step…, final. The read is
 * there when the body was not shown before the stand-in started, which a later request sees as: the body is shown and
 * the history holds a read of it (an earlier scripted read counts too: the stand-in then reads once more, harmless).
 */
export function expandFollowSkill(turn: FollowSkillTurn, context: FollowSkillContext, position: number): PlayedTurn[] {
  const { name } = turn;
  const read: PlayedTurn = { type: 'shell', command: readCommand(name), intent: { kind: 'use_skill', name } };
  const body = shownSkillBody(context.strings, name);
  if (body !== null) {
    const steps = skillShellSteps(body);
    const withRead = position > 0 && readIssued(context, name);
    const final: PlayedTurn =
      steps.length > 0
        ? { type: 'final', text: `Followed skill ${name}: ran its ${steps.length} shell step(s).`, done: true }
        : {
            type: 'final',
            text: `agent-harness stand-in: skill ${name} was loaded but its body has no fenced shell steps (\`\`\`bash, \`\`\`sh or \`\`\`shell blocks) to follow.`,
            done: false,
          };
    return [...(withRead ? [read] : []), ...steps.map((command): PlayedTurn => ({ type: 'shell', command })), final];
  }
  const offered = context.offered(name);
  const notLoaded: PlayedTurn = {
    type: 'final',
    text: `agent-harness stand-in: ${SKILL_NOT_LOADED}: the engine never showed the model the body of skill ${name} (${offered ? 'it was offered' : 'it was not offered'}; the stand-in asked to load it and got no SKILL.md body back), so its steps were not followed.`,
    done: false,
  };
  return [read, notLoaded];
}

/** Every string in a JSON value, depth first. */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) stringsOf(item, out);
  return out;
}

/** True for a history item that is a model output (an assistant or model message, a call, reasoning), on any wire. */
function isModelOutput(item: unknown): boolean {
  if (item === null || typeof item !== 'object') return false;
  const { role, type } = item as { role?: unknown; type?: unknown };
  if (role === 'assistant' || role === 'model') return true;
  return typeof type === 'string' && /^(function_call|custom_tool_call|local_shell_call|reasoning)$/.test(type);
}

/**
 * The part of a request the engine wrote before the model's first output: everything but the history (`input`,
 * `messages` or `contents`) past that output. What it names there, the engine offered (or the user asked for).
 */
function offeredPart(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (Array.isArray(value) && (key === 'input' || key === 'messages' || key === 'contents')) {
      const first = value.findIndex(isModelOutput);
      out[key] = first < 0 ? value : value.slice(0, first);
    } else out[key] = value;
  }
  return out;
}

/** What the stand-in and `if_skill_offered` read of a request `body` on a wire whose engines have `tools`. */
export function followSkillContext(body: unknown, tools: readonly EngineToolTable[]): FollowSkillContext {
  let offeredText: string | null = null;
  return {
    strings: stringsOf(body),
    text: JSON.stringify(body ?? null),
    tools,
    offered(name) {
      offeredText ??= JSON.stringify(offeredPart(body) ?? null);
      return new RegExp(`(^|[^A-Za-z0-9._-])${literal(name)}($|[^A-Za-z0-9_-])`).test(offeredText);
    },
  };
}
