/**
 * Start flags carried over to a resume: the split (carried, dropped) and the merge into each engine's default
 * resume argv. The engine test proves the real CLIs accept the result.
 */
import { describe, expect, it } from 'vitest';
import { engineIds, loadEngine } from '../../src/engines/registry.js';
import type { EngineAdapter } from '../../src/engines/engine.js';

const adapters = new Map<string, EngineAdapter>(
  await Promise.all(engineIds().map(async (id) => [id, await loadEngine(id)] as const)),
);
const getEngine = (id: string): EngineAdapter => adapters.get(id)!;
import { carryResumeFlags, withCarriedFlags } from '../../src/engines/resume-flags.js';

const resumeOf = (engine: string, startArgs: string[]) => {
  const adapter = getEngine(engine);
  const carry = carryResumeFlags(startArgs, adapter.resumeFlags ?? []);
  return {
    ...carry,
    argv: withCarriedFlags(
      adapter.buildResumeArgs!({ sessionId: 'S', message: 'next' }),
      carry.carried,
      adapter.resumeFlags ?? [],
    ),
  };
};

describe('resume flags', () => {
  it('codex: keeps -m and -c, drops start-only flags and the prompt', () => {
    const out = resumeOf('codex', [
      'exec',
      '--json',
      '--oss',
      '-m',
      'gpt-5.4',
      '-c',
      'model_reasoning_effort="high"',
      '-s',
      'read-only',
      'first prompt',
    ]);
    expect(out.carried).toEqual(['--json', '-m', 'gpt-5.4', '-c', 'model_reasoning_effort="high"']);
    expect(out.dropped).toEqual(['--oss', '-s']);
    expect(out.argv).toEqual([
      'exec',
      'resume',
      '--skip-git-repo-check',
      'S',
      'next',
      '--json',
      '-m',
      'gpt-5.4',
      '-c',
      'model_reasoning_effort="high"',
    ]);
  });

  it('gemini: a start with --output-format json resumes as json, not the default stream-json', () => {
    const out = resumeOf('gemini', ['-p', 'hi', '--output-format', 'json', '--yolo', '-m', 'gemini-2.5-flash']);
    expect(out.argv).toEqual([
      '--resume',
      'S',
      '-p',
      'next',
      '--output-format',
      'json',
      '--yolo',
      '-m',
      'gemini-2.5-flash',
    ]);
    expect(out.argv.filter((t) => t === '--output-format')).toHaveLength(1);
  });

  it('understands --flag=value and aliases', () => {
    const out = resumeOf('gemini', ['--prompt=hi', '-o', 'json', '--model=gemini-2.5-pro']);
    expect(out.carried).toEqual(['-o', 'json', '--model=gemini-2.5-pro']);
    expect(out.dropped).toEqual(['--prompt=hi']);
    expect(out.argv).toEqual(['--resume', 'S', '-p', 'next', '--yolo', '-o', 'json', '--model=gemini-2.5-pro']);
  });

  it('claude: keeps --model and permission flags; a default command (no start args) carries nothing', () => {
    const out = resumeOf('claude', [
      '-p',
      'hi',
      '--model',
      'sonnet',
      '--permission-mode',
      'plan',
      '--output-format',
      'stream-json',
      '--verbose',
    ]);
    expect(out.carried).toEqual([
      '--model',
      'sonnet',
      '--permission-mode',
      'plan',
      '--output-format',
      'stream-json',
      '--verbose',
    ]);
    expect(out.argv.slice(0, 4)).toEqual(['-p', '--resume', 'S', 'next']);
    expect(out.argv).toContain('--dangerously-skip-permissions');
    expect(resumeOf('claude', []).argv).toEqual(
      getEngine('claude').buildResumeArgs!({ sessionId: 'S', message: 'next' }),
    );
  });

  it('stops at -- and never treats a flag value as a flag', () => {
    expect(carryResumeFlags(['-m', '--weird-model-name', '--', '--json'], getEngine('codex').resumeFlags!)).toEqual({
      carried: ['-m', '--weird-model-name'],
      dropped: [],
    });
  });
});
