/**
 * `agent.start(engine, options)`'s options are checked before anything runs: a wrong type is CONFIG_INVALID naming
 * the option and its value (not a TypeError, not an attempt recorded as INTERNAL_ERROR).
 */
import { describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { checkAgentStartOptions } from '../../src/vitest/start-options.js';

function thrown(options: unknown): unknown {
  try {
    checkAgentStartOptions('codex', options);
  } catch (error) {
    return error;
  }
  return null;
}

describe('agent.start options', () => {
  it.for([
    ['null options', null, '(options)', 'options must be an object, not null'],
    ['a string for options', 'go', '(options)', 'options must be an object, not "go"'],
    ['skills as a string', { skills: 'skills' }, 'skills', 'option skills = "skills"'],
    ['onlySkills as a string', { onlySkills: 'a' }, 'onlySkills', 'option onlySkills = "a"'],
    ['args as a string', { args: 'exec --json' }, 'args', 'option args = "exec --json"'],
    ['a numeric prompt', { prompt: 42 }, 'prompt', 'option prompt = 42'],
    ['translateMode 9', { translateMode: 9 }, 'translateMode', 'a translate view is 0, 1, 2 or 3'],
    ['a numeric file', { files: { 'a.txt': 5 } }, 'files.a.txt', 'a file is a string or bytes'],
    ['an unknown model', { model: 'bogus' }, 'model', 'option model = "bogus"'],
    ['a negative fork', { fork: { at: -2 } }, 'fork.at', 'option fork.at = -2'],
  ] as const)('refuses %s with CONFIG_INVALID naming it', ([, options, field, text]) => {
    const error = thrown(options);
    expect(isAgentHarnessError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as { details?: { field?: string } }).details?.field).toBe(field);
    expect((error as Error).message).toContain('agent.start("codex")');
    expect((error as Error).message).toContain(text);
  });

  it('accepts every documented option', () => {
    expect(
      thrown({
        prompt: 'x',
        args: ['exec'],
        skills: ['skills'],
        onlySkills: ['a'],
        timeoutMs: 1000,
        translateMode: 3,
        template: 't',
        files: { 'a.txt': 'x', 'b.bin': new Uint8Array([1]), 'c.bin': Buffer.from('c') },
        git: true,
        model: 'replay',
        cassette: 'c.json',
        fork: { at: 1, to: 'live', cassette: 'f.json' },
        expose: ['data:ro', { path: 'x', readOnly: true }],
        script: [{ type: 'final', text: 'ok' }],
      }),
    ).toBeNull();
    expect(thrown({})).toBeNull();
  });
});
