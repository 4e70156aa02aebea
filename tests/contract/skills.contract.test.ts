import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { rejectionOf } from '../helpers/errors.js';
import { SkillInjectionSchema } from '../../src/protocol/index.js';
import { COMPLETION_CONTRACT_TAG, DONE_MARKER, injectSkills } from '../../src/runtime/skills.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-skills-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function writeSkill(root: string, name: string, body: string): void {
  fs.mkdirSync(path.join(root, name), { recursive: true });
  fs.writeFileSync(path.join(root, name, 'SKILL.md'), body);
}

describe('skill injection', () => {
  it('copies skills from every root, later roots override earlier ones, and appends the contract once', async () => {
    const project = path.join(dir, 'skills');
    const fixtures = path.join(dir, 'tests', 'fixtures', 'skills');
    writeSkill(project, 'alpha', '---\nname: alpha\ndescription: project alpha\n---\nproject version\n');
    writeSkill(
      project,
      'beta',
      `---\nname: beta\ndescription: b\n---\nbody\n${COMPLETION_CONTRACT_TAG}\nalready has it\n`,
    );
    fs.writeFileSync(path.join(project, 'beta', 'helper.sh'), 'echo hi\n');
    writeSkill(fixtures, 'alpha', '---\nname: alpha\ndescription: fixture alpha\n---\nfixture version\n');
    const target = path.join(dir, 'run', '.codex', 'skills');
    const summary = SkillInjectionSchema.parse(
      await injectSkills({ sourceRoots: [project, fixtures, path.join(dir, 'missing')], targetRoot: target }),
    );

    expect(summary.skill_count).toBe(2);
    expect(summary.target_root).toBe(target);
    const alpha = fs.readFileSync(path.join(target, 'alpha', 'SKILL.md'), 'utf8');
    expect(alpha).toContain('fixture version');
    expect(alpha).not.toContain('project version');
    expect(alpha).toContain(DONE_MARKER);
    expect(alpha.split(COMPLETION_CONTRACT_TAG)).toHaveLength(2);
    const beta = fs.readFileSync(path.join(target, 'beta', 'SKILL.md'), 'utf8');
    expect(beta.split(COMPLETION_CONTRACT_TAG)).toHaveLength(2);
    expect(fs.readFileSync(path.join(target, 'beta', 'helper.sh'), 'utf8')).toBe('echo hi\n');
    const byName = Object.fromEntries(summary.skills.map((skill) => [skill.name, skill]));
    expect(byName.alpha?.source).toBe(path.join(fixtures, 'alpha'));
    expect(byName.alpha?.contract_appended).toBe(true);
    expect(byName.beta?.contract_appended).toBe(false);
    expect(byName.alpha?.sha256).toBe(createHash('sha256').update(alpha).digest('hex'));
    // The sources are untouched.
    expect(fs.readFileSync(path.join(fixtures, 'alpha', 'SKILL.md'), 'utf8')).not.toContain(DONE_MARKER);
  });

  it('records skill_count 0 when no source root exists', async () => {
    const summary = await injectSkills({ sourceRoots: [path.join(dir, 'nope')], targetRoot: path.join(dir, 't') });
    expect(summary).toEqual({
      source_roots: [path.join(dir, 'nope')],
      target_root: path.join(dir, 't'),
      skill_count: 0,
      skills: [],
    });
    expect(fs.existsSync(path.join(dir, 't'))).toBe(false);
  });

  it.each([
    ['a name with a space', 'bad name'],
    ['a leading dash', '-rf'],
    ['shell metacharacters', '$(touch pwned)'],
    ['a newline', 'two\nlines'],
    ['a leading dot directory', '.hidden'],
  ])('rejects %s with SKILL_INVALID', async (_label, name) => {
    const root = path.join(dir, 'skills');
    writeSkill(root, name, 'x');
    const error = await rejectionOf(injectSkills({ sourceRoots: [root], targetRoot: path.join(dir, 't') }));
    expect(isAgentHarnessError(error, 'SKILL_INVALID')).toBe(true);
    expect((error as Error).message).toContain(JSON.stringify(name));
    expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
  });

  it('skips dot directories without a SKILL.md (.git of a cloned skills repository, .github)', async () => {
    const root = path.join(dir, 'skills');
    writeSkill(root, 'real', 'x');
    fs.mkdirSync(path.join(root, '.git', 'objects'), { recursive: true });
    fs.mkdirSync(path.join(root, '.github'), { recursive: true });
    const summary = await injectSkills({ sourceRoots: [root], targetRoot: path.join(dir, 't') });
    expect(summary.skills.map((s) => s.name)).toEqual(['real']);
  });

  it('skips a skill root that does not exist, and refuses one that is a file by name', async () => {
    const root = path.join(dir, 'skills');
    writeSkill(root, 'real', 'x');
    const missing = path.join(dir, 'no-such-root');
    const summary = await injectSkills({ sourceRoots: [missing, root], targetRoot: path.join(dir, 't') });
    expect(summary.skills.map((s) => s.name)).toEqual(['real']);
    const file = path.join(dir, 'skills.txt');
    fs.writeFileSync(file, 'not a directory');
    const error = await rejectionOf(injectSkills({ sourceRoots: [root, file], targetRoot: path.join(dir, 't2') }));
    expect(isAgentHarnessError(error, 'SKILL_INVALID')).toBe(true);
    expect((error as Error).message).toContain(`The skill root ${file} is not a directory`);
  });

  it('rejects a skill directory without SKILL.md and a symlinked skill', async () => {
    const root = path.join(dir, 'skills');
    fs.mkdirSync(path.join(root, 'empty'), { recursive: true });
    let error = await rejectionOf(injectSkills({ sourceRoots: [root], targetRoot: path.join(dir, 't') }));
    expect(isAgentHarnessError(error, 'SKILL_INVALID')).toBe(true);
    fs.rmSync(path.join(root, 'empty'), { recursive: true });
    writeSkill(dir, 'outside', 'x');
    fs.symlinkSync(path.join(dir, 'outside'), path.join(root, 'linked'));
    error = await rejectionOf(injectSkills({ sourceRoots: [root], targetRoot: path.join(dir, 't') }));
    expect(isAgentHarnessError(error, 'SKILL_INVALID')).toBe(true);
  });

  it('refuses a linked SKILL.md by name, and leaves the file it points at as it was', async () => {
    const root = path.join(dir, 'skills');
    const original = path.join(dir, 'shared-SKILL.md');
    fs.writeFileSync(original, '---\nname: linked-file\ndescription: d\n---\nbody\n');
    fs.mkdirSync(path.join(root, 'linked-file'), { recursive: true });
    fs.symlinkSync(original, path.join(root, 'linked-file', 'SKILL.md'));
    const error = await rejectionOf(injectSkills({ sourceRoots: [root], targetRoot: path.join(dir, 't') }));
    expect(isAgentHarnessError(error, 'SKILL_INVALID')).toBe(true);
    expect((error as Error).message).toContain('SKILL.md is a symbolic link');
    expect(fs.readFileSync(original, 'utf8')).not.toContain(COMPLETION_CONTRACT_TAG);
  });
});
