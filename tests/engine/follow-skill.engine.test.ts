/**
 * The skill-following stand-in on every engine (issue 45 item 6): the scripted model follows the SKILL.md the engine
 * actually showed it, keyless. One attempt per engine per case, the cases of an engine started at once: a correct
 * skill writes its file and completes; a skill whose command is wrong completes without the file (its check fails);
 * a skill the engine never offered is never shown, so the stand-in says SKILL_NOT_LOADED and the attempt does not
 * complete.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { test, turns } from '../../src/public/vitest.js';
import { SKILL_NOT_LOADED } from '../../src/model/follow-skill.js';
import { missingReasons, registryEngines } from '../helpers/engines.js';

const ENGINES = registryEngines();
const MISSING = await missingReasons();
const SKILLS = 'fixtures/follow-skill/skills';

describe.for(ENGINES)('%s follows the skill it loaded (keyless stand-in)', (engine) => {
  test('a correct SKILL.md passes, a wrong command fails, an unloaded skill fails', async ({ agent, skip }) => {
    const missing = MISSING[engine];
    if (missing) skip(missing);
    const start = (skill: string, onlySkills: string[]) =>
      agent.start(engine, {
        prompt: `Use the ${skill} skill.`,
        skills: [SKILLS],
        onlySkills,
        script: [turns.followSkill(skill)],
      });
    const [good, broken, unloaded] = await Promise.all([
      start('greet-file', ['greet-file']),
      start('greet-file-broken', ['greet-file-broken']),
      // Installed but only `greet-file` is injected: the engine has no greet-file-broken to show.
      start('greet-file-broken', ['greet-file']),
    ]);

    expect(good).toHaveCompleted();
    expect(fs.readFileSync(path.join(good.runDir, 'greeting.txt'), 'utf8')).toBe('hello from the skill\n');
    expect(good.finalText).toContain('Followed skill greet-file: ran its 2 shell step(s).');

    // The wrong command ran (the stand-in followed the skill as written): the expected file is missing.
    expect(broken).toHaveCompleted();
    expect(fs.existsSync(path.join(broken.runDir, 'greeting.txt'))).toBe(false);
    expect(fs.existsSync(path.join(broken.runDir, 'greting.txt'))).toBe(true);

    expect(unloaded).not.toHaveCompleted();
    expect(unloaded.finalText).toContain(SKILL_NOT_LOADED);
    expect(fs.existsSync(path.join(unloaded.runDir, 'greting.txt'))).toBe(false);
  });
});
