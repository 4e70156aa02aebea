/**
 * Script intents (`write_file`, `use_skill`): lowered to shell turns that do exactly that under a real shell.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { parseModelScript, turns, useSkillCommand } from '../../src/model/index.js';
import { thrownBy } from '../helpers/errors.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-intents-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function bash(command: string): { status: number | null; stdout: string } {
  const result = spawnSync('bash', ['-lc', command], { cwd: dir, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout };
}

describe('script intents', () => {
  it('parses write_file and use_skill from JSON into shell turns', () => {
    const script = parseModelScript({ version: 1, turns: [{ type: 'write_file', path: 'a.txt', content: 'x' }, { type: 'use_skill', name: 'demo-hello' }, { type: 'final', text: 'ok' }] });
    expect(script.turns.map((t) => t.type)).toEqual(['shell', 'shell', 'final']);
  });

  it('writes the content byte for byte, whatever it holds', () => {
    const content = "line 1\nit's \"quoted\" $(touch pwned) `x` \\ end\n";
    const turn = turns.writeFile('out dir file.txt', content);
    expect(turn.type).toBe('shell');
    expect(bash((turn as { command: string }).command).status).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'out dir file.txt'), 'utf8')).toBe(content);
    expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
  });

  it('reads the SKILL.md of the named skill from the engine skill root', () => {
    fs.mkdirSync(path.join(dir, '.codex', 'skills', 'demo-hello'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.codex', 'skills', 'demo-hello', 'SKILL.md'), 'skill body\n');
    const run = bash(useSkillCommand('demo-hello'));
    expect(run).toEqual({ status: 0, stdout: 'skill body\n' });
  });

  it('rejects a hostile skill name', () => {
    const error = thrownBy(() => parseModelScript({ version: 1, turns: [{ type: 'use_skill', name: '../x; rm -rf /' }] }, 'hostile.json'));
    expect(isAgentHarnessError(error, 'MODEL_SCRIPT_INVALID')).toBe(true);
    expect(isAgentHarnessError(thrownBy(() => turns.useSkill('$(id)')), 'MODEL_SCRIPT_INVALID')).toBe(true);
  });
});
