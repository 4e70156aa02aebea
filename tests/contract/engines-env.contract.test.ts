/**
 * `AGENT_HARNESS_ENGINES` narrows a run to some of the project's engines without editing its config (a CI job that
 * runs the matrix on fewer engines): the plugin's `engines` are intersected with it; unset or `all`, they are the
 * option's; a name no engine has is CONFIG_INVALID naming the variable.
 */
import { describe, expect, it } from 'vitest';
import {
  enabledEngines,
  ENGINES_ENV,
  parseAgentHarnessOptions,
  toAgentHarnessConfig,
} from '../../src/vitest/options.js';

describe(ENGINES_ENV, () => {
  it('unset or blank: the configured engines (or all, when none are configured)', () => {
    expect(enabledEngines(['codex', 'claude'], {})).toEqual(['codex', 'claude']);
    expect(enabledEngines(['codex'], { [ENGINES_ENV]: '  ' })).toEqual(['codex']);
    expect(enabledEngines(undefined, {})).toBeNull();
  });

  it('`all` narrows nothing, like unset (a script that widens a narrowed default says it so)', () => {
    expect(enabledEngines(['codex', 'claude'], { [ENGINES_ENV]: 'all' })).toEqual(['codex', 'claude']);
    expect(enabledEngines(undefined, { [ENGINES_ENV]: ' all ' })).toBeNull();
    // Only alone: beside engine names it is a name no engine has.
    expect(() => enabledEngines(undefined, { [ENGINES_ENV]: 'all,codex' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
  });

  it('narrows the configured engines to those it names, in the config order', () => {
    expect(enabledEngines(['codex', 'claude', 'gemini'], { [ENGINES_ENV]: 'gemini, codex' })).toEqual([
      'codex',
      'gemini',
    ]);
    // It narrows, never widens: an engine the project left out stays out.
    expect(enabledEngines(['codex'], { [ENGINES_ENV]: 'claude' })).toEqual([]);
    expect(enabledEngines(undefined, { [ENGINES_ENV]: 'claude,opencode' })).toEqual(['claude', 'opencode']);
  });

  it('reaches the config the tests get', () => {
    const options = parseAgentHarnessOptions({ engines: ['codex', 'claude'] });
    expect(toAgentHarnessConfig(options, '/p', { [ENGINES_ENV]: 'claude' }).engines).toEqual(['claude']);
    expect(toAgentHarnessConfig(options, '/p', {}).engines).toEqual(['codex', 'claude']);
  });

  it('an id no engine has is CONFIG_INVALID naming the variable and the id', () => {
    expect(() => enabledEngines(['codex'], { [ENGINES_ENV]: 'codex,codx' })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringMatching(/AGENT_HARNESS_ENGINES=.*codx/),
      }),
    );
  });
});
