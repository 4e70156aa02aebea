/**
 * Run roots with spaces, non-ASCII letters and quotes, on every engine of the registry: the engine's own tools (a
 * file write and a shell command) work in a run directory under such a root; a root whose path an engine's tools
 * cannot work under (gemini's path checks: a double quote; gemini's and opencode's URI-decoding: `%41`) is refused
 * before any run directory exists, with ENGINE_CAPABILITY_UNAVAILABLE.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { getProvider } from '../../src/providers/index.js';
import type { AgentEvent } from '../../src/protocol/index.js';
import { attemptAuditPaths } from '../../src/core/audit-files.js';
import { expectCompleteAudit } from '../helpers/audit.js';
import { missingReasons, registryEngines } from '../helpers/engines.js';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-paths-'));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

const MISSING = await missingReasons();
const WRITE_AND_SHELL = {
  version: 1,
  turns: [
    { type: 'write_file', path: 'written.txt', content: 'by the write tool\n' },
    { type: 'shell', command: "printf 'by the shell\\n' > shelled.txt" },
    { type: 'final', text: 'Done.' },
  ],
};

describe.for(registryEngines())('%s under an odd run root', (engine) => {
  const missing = MISSING[engine];
  beforeEach(({ skip }) => {
    if (missing) skip(missing);
  });

  it("works under a run root with spaces, a single quote and non-ASCII letters (/… q'd ü x/runs)", async () => {
    const runRoot = path.join(base, `ah q'd ü x ${engine}`, 'runs');
    fs.mkdirSync(runRoot, { recursive: true });
    const events: AgentEvent[] = [];
    for await (const event of getProvider(engine).query({
      provider: engine,
      prompt: 'Write two files.',
      extra: { runRoot, script: WRITE_AND_SHELL },
    }))
      events.push(event);
    const last = events.at(-1)!;
    const { runDir } = last.diagnostics as { runDir: string };
    expect(path.dirname(runDir)).toBe(runRoot);
    const audit = attemptAuditPaths(runDir, 1);
    const why = () =>
      `last: ${JSON.stringify(last).slice(0, 600)}; stdout: ${fs.readFileSync(audit.stdout, 'utf8').slice(0, 2000)}`;
    expect(last, why()).toMatchObject({ type: 'complete', result: { success: true } });
    expect(fs.readFileSync(path.join(runDir, 'written.txt'), 'utf8'), why()).toBe('by the write tool\n');
    expect(fs.readFileSync(path.join(runDir, 'shelled.txt'), 'utf8'), why()).toBe('by the shell\n');
    // No tool failed: every tool result of the attempt completed.
    const rasp = fs
      .readFileSync(audit.rasp, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line).data);
    expect(
      rasp.filter((d) => d.type === 'engine.tool.result').map((d) => d.status),
      why(),
    ).not.toContain('failed');
    expectCompleteAudit(audit);
  });

  it.for(['ah "dq" x', 'ah %41 x'])(
    'a run root its tools cannot work under (%s) is refused before the run, or works',
    async (name) => {
      const runRoot = path.join(base, `${name} ${engine}`, 'runs');
      fs.mkdirSync(runRoot, { recursive: true });
      const query = async (): Promise<AgentEvent | undefined> => {
        let last: AgentEvent | undefined;
        for await (const event of getProvider(engine).query({
          provider: engine,
          prompt: 'Write two files.',
          extra: { runRoot, script: WRITE_AND_SHELL },
        }))
          last = event;
        return last;
      };
      // gemini refuses `"` in any path; gemini and opencode URI-decode their directory (`%41` would read as `A`).
      const refused = engine === 'gemini' || (engine === 'opencode' && name.includes('%'));
      if (refused) {
        await expect(query()).rejects.toMatchObject({ code: 'ENGINE_CAPABILITY_UNAVAILABLE' });
        expect(fs.readdirSync(runRoot)).toEqual([]);
        return;
      }
      const last = await query();
      expect(last).toMatchObject({ type: 'complete', result: { success: true } });
      const { runDir } = last!.diagnostics as { runDir: string };
      expect(fs.readFileSync(path.join(runDir, 'written.txt'), 'utf8')).toBe('by the write tool\n');
    },
  );
});
