/**
 * Seeded probabilistic script turns and the skill-following stand-in's turn choice (issue 45 item 6), on the turn
 * selection itself and through the model server: same seed, same choices on every request; a branch's rate follows
 * p over seeds; if_skill_offered reads what the engine named before the model's first output; follow_skill reads the
 * skill body from the request, its steps in order, and says SKILL_NOT_LOADED when the body never came.
 */
import { describe, expect, it } from 'vitest';
import { drawFor } from '../../src/model/branch.js';
import { SKILL_NOT_LOADED, shownSkillBody, skillShellSteps } from '../../src/model/follow-skill.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { parseModelScript, selectTurn, turns, type ModelScript } from '../../src/model/index.js';
import { claudeFacts } from '../../src/engines/claude/facts.js';

const script = (seed: number, ...list: ReturnType<typeof turns.text>[]): ModelScript =>
  parseModelScript({ version: 1, seed, turns: list });

/** A Chat-style body: a system prompt, the user prompt, then `history` (assistant/tool messages). */
const chatBody = (system: string, history: unknown[] = []) => ({
  messages: [{ role: 'system', content: system }, { role: 'user', content: 'Go.' }, ...history],
});

describe('branch and if_skill_offered', () => {
  it('a branch is taken with probability p, the same way for the same seed on every request', () => {
    const s = (seed: number) =>
      script(seed, turns.branch(0.3, [turns.final('took it')], [turns.final('left it')]), turns.final('after'));
    const taken = (seed: number) => {
      const first = selectTurn(s(seed), 0, chatBody('x'));
      return first.kind === 'turn' && first.turn.type === 'final' && first.turn.text === 'took it';
    };
    const outcomes = Array.from({ length: 2000 }, (_, seed) => taken(seed));
    const rate = outcomes.filter(Boolean).length / outcomes.length;
    // 2000 draws at p = 0.3: the standard error is 0.01, so ±0.05 fails only a broken PRNG.
    expect(rate).toBeGreaterThan(0.25);
    expect(rate).toBeLessThan(0.35);
    for (let seed = 0; seed < 50; seed += 1) expect(taken(seed)).toBe(taken(seed));
    // The draw depends on the branch's place too, not only the seed.
    expect(drawFor(1, '0')).not.toBe(drawFor(1, '1'));
    // The turns after the branch keep their place: index 1 is `after` whichever way the branch went.
    for (const seed of [0, 1, 2, 3])
      expect(selectTurn(s(seed), 1, chatBody('x'))).toMatchObject({ turn: { text: 'after' } });
    // p 0 and 1 are never and always.
    expect(selectTurn(script(5, turns.branch(0, [turns.text('a')], [turns.text('b')])), 0)).toMatchObject({
      turn: { text: 'b' },
    });
    expect(selectTurn(script(5, turns.branch(1, [turns.text('a')], [turns.text('b')])), 0)).toMatchObject({
      turn: { text: 'a' },
    });
  });

  it('if_skill_offered reads what the engine named before the first model output', () => {
    const s = script(
      0,
      turns.ifSkillOffered('greet-file', [turns.text('offered')], [turns.text('not offered')]),
      turns.text('next'),
    );
    expect(selectTurn(s, 0, chatBody('Skills: greet-file: writes a greeting'))).toMatchObject({
      turn: { text: 'offered' },
    });
    expect(selectTurn(s, 0, chatBody('Skills: none'))).toMatchObject({ turn: { text: 'not offered' } });
    // Named only later in the history (the model read it anyway): still "not offered", so the expansion stays stable.
    const later = chatBody('Skills: none', [{ role: 'assistant', content: 'cat .claude/skills/greet-file/SKILL.md' }]);
    expect(selectTurn(s, 0, later)).toMatchObject({ turn: { text: 'not offered' } });
  });

  it('rejects bad dynamic turns with MODEL_SCRIPT_INVALID naming the field', () => {
    expect(() => parseModelScript({ version: 1, turns: [{ type: 'branch', p: 2, turns: [] }] })).toThrow(
      /turns\.0\.p.*branch turn/,
    );
    expect(() => parseModelScript({ version: 1, turns: [{ type: 'follow_skill', name: '../x' }] })).toThrow(
      /follow_skill turn/,
    );
    expect(() => parseModelScript({ version: 1, seed: -1, turns: [] })).toThrow(/seed/);
    expect(() => turns.followSkill('a b')).toThrow(/plain skill name/);
    // Nested turns are parsed like top-level ones: intents lowered, unknown types named.
    const nested = parseModelScript({
      version: 1,
      turns: [{ type: 'branch', p: 0.5, turns: [{ type: 'write_file', path: 'a', content: 'b' }] }],
    });
    expect(nested.turns[0]).toMatchObject({ turns: [{ type: 'shell', intent: { kind: 'write_file' } }], else: [] });
    expect(() =>
      parseModelScript({ version: 1, turns: [{ type: 'branch', p: 0.5, turns: [{ type: 'nope' }] }] }),
    ).toThrow(/unknown turn type "nope"/);
  });
});

const BODY =
  '# greet-file\n\n```bash\nprintf hi > greeting.txt\n```\n\ntext\n\n~~~sh\ngrep -q hi greeting.txt\n~~~\n\n```python\nprint(1)\n```\n';

describe('follow_skill', () => {
  it('finds the body by its signature and takes its fenced shell steps in order', () => {
    expect(skillShellSteps(BODY)).toEqual(['printf hi > greeting.txt', 'grep -q hi greeting.txt']);
    expect(
      shownSkillBody([`Base directory for this skill: /r/.claude/skills/greet-file\n\n${BODY}`], 'greet-file'),
    ).not.toBeNull();
    expect(shownSkillBody([`---\nname: greet-file\n---\n${BODY}`], 'greet-file')).not.toBeNull();
    expect(shownSkillBody([`<activated_skill name="greet-file">${BODY}`], 'greet-file')).not.toBeNull();
    // A listing that names the skill's path without a body is not the body; another skill's body is not it.
    expect(
      shownSkillBody(['- greet-file: writes (file: /r/.codex/skills/greet-file/SKILL.md)'], 'greet-file'),
    ).toBeNull();
    expect(shownSkillBody([`---\nname: greet-file-broken\n---\n${BODY}`], 'greet-file')).toBeNull();
  });

  it('reads the skill the engine way, runs the steps, finishes; or says SKILL_NOT_LOADED', () => {
    const s = script(0, turns.followSkill('greet-file'));
    const pick = (body: unknown, n: number) => selectTurn(s, n, body, [claudeFacts.tools]);
    const offered = chatBody('Skills: greet-file');
    // Turn 0: the body is not shown yet: load it through the engine's skill tool (the use_skill intent).
    expect(pick(offered, 0)).toMatchObject({
      turn: { type: 'shell', intent: { kind: 'use_skill', name: 'greet-file' } },
    });
    const read = { role: 'assistant', content: [{ type: 'tool_use', name: 'Skill', input: { skill: 'greet-file' } }] };
    const loaded = chatBody('Skills: greet-file', [
      read,
      { role: 'user', content: `Base directory for this skill: /r/.claude/skills/greet-file\n\n${BODY}` },
    ]);
    expect(pick(loaded, 1)).toMatchObject({ turn: { type: 'shell', command: 'printf hi > greeting.txt' } });
    expect(pick(loaded, 2)).toMatchObject({ turn: { type: 'shell', command: 'grep -q hi greeting.txt' } });
    expect(pick(loaded, 3)).toMatchObject({
      turn: { type: 'final', done: true, text: 'Followed skill greet-file: ran its 2 shell step(s).' },
    });
    expect(pick(loaded, 4)).toMatchObject({ kind: 'exhausted' });
    // Injected before the stand-in started (no read in the history): the steps start at once.
    const injected = chatBody(`Skills: greet-file\n---\nname: greet-file\n---\n${BODY}`);
    expect(pick(injected, 0)).toMatchObject({ turn: { command: 'printf hi > greeting.txt' } });
    // The read came back without the body: the final message says so, without the done marker.
    const failed = chatBody('Skills: none', [read, { role: 'user', content: 'Unknown skill: greet-file' }]);
    expect(pick(failed, 1)).toMatchObject({
      turn: { type: 'final', done: false, text: expect.stringContaining(SKILL_NOT_LOADED) },
    });
  });

  it('is served by the model server from the request it received', async () => {
    const server = await startModelServer({ script: script(0, turns.followSkill('greet-file')) });
    try {
      const post = async (messages: unknown[]) => {
        const response = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm', messages, tools: [{ type: 'function', function: { name: 'bash' } }] }),
        });
        return (await response.json()) as {
          choices: Array<{
            message: { content: string | null; tool_calls?: Array<{ function: { arguments: string } }> };
          }>;
        };
      };
      const first = await post([{ role: 'user', content: 'Use greet-file.' }]);
      expect(JSON.parse(first.choices[0]!.message.tool_calls![0]!.function.arguments).command).toBe(
        'cat .*/skills/greet-file/SKILL.md',
      );
    } finally {
      await server.close();
    }
  });
});
