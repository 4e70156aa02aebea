/**
 * Load evidence of a skill (issue 45 item 3): the engine opened the skill's body (a tool call that read its
 * `SKILL.md`) or was given it (a native skill tool such as claude's `Skill`). Being offered a skill (listed in the
 * system prompt) is not loading it.
 */

/** The parts of a tool call the evidence is read from (a `ToolCallRecord` has them). */
export interface ToolCallLike {
  kind: string;
  name: string;
  input: unknown;
}

/** True when a tool call shows use of skill `name`: a skill tool naming it, or a read of its `SKILL.md`. */
export function callUsesSkill(call: ToolCallLike, name: string): boolean {
  const input = call.input && typeof call.input === 'object' ? (call.input as Record<string, unknown>) : {};
  if (call.kind === 'skill' && (call.name === name || input.name === name || input.skill === name)) return true;
  if (
    [input.skill, input.skill_name, input.skillName, input.name].includes(name) &&
    (call.kind === 'skill' || /skill/i.test(call.name))
  )
    return true;
  const text = typeof call.input === 'string' ? call.input : JSON.stringify(call.input ?? '');
  return new RegExp(`(^|[/"'\\s])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/SKILL\\.md`).test(text);
}

/** The skills among `candidates` that the tool calls show loaded, in the order given. */
export function skillsLoaded(calls: readonly ToolCallLike[], candidates: readonly string[]): string[] {
  return candidates.filter((name) => calls.some((call) => callUsesSkill(call, name)));
}
