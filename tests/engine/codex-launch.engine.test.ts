/**
 * With the real codex CLI: an attempt starts the native binary behind the npm launcher (`bin/codex.js`), records
 * both in the meta, and gives codex the launcher's variables; `AGENT_HARNESS_NPM_LAUNCHERS=1` runs the launcher as
 * installed. The agent's shell prints what codex passed down, so the check is what the engine process really had. The
 * attempt's own TMPDIR is gone once it ends, whatever the engine left there.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { CODEX_VERSION } from '../../src/engines/codex/index.js';
import { turns } from '../../src/model/index.js';
import { launchAttempt, launchTestPaths } from '../helpers/launch-attempt.js';
import { scaled } from '../helpers/load-scaled.js';

const paths = launchTestPaths('codex-launch');
const launcher = fs.realpathSync(path.resolve('node_modules/@openai/codex/bin/codex.js'));
const script = {
  version: 1 as const,
  turns: [turns.shell('env | grep "^CODEX_MANAGED" | sort > managed.txt'), turns.final('Done.')],
};

describe('codex launch', () => {
  it(
    "runs the native binary with the launcher's variables, and records both",
    async () => {
      const { result, meta } = await launchAttempt(paths, 'codex', script, false);
      expect(meta.command.launcher).toBe(launcher);
      expect(path.basename(meta.command.executable)).toBe('codex');
      expect(meta.command.executable).toContain(`${path.sep}vendor${path.sep}`);
      expect(meta.engine_version).toBe(CODEX_VERSION);
      expect(fs.readFileSync(path.join(result.runDir, 'managed.txt'), 'utf8')).toBe(
        `CODEX_MANAGED_BY_NPM=1\nCODEX_MANAGED_PACKAGE_ROOT=${path.dirname(path.dirname(launcher))}\n`,
      );
    },
    scaled(120_000),
  );

  it(
    'AGENT_HARNESS_NPM_LAUNCHERS=1 runs the launcher as installed, which sets the same variables',
    async () => {
      const { result, meta } = await launchAttempt(paths, 'codex', script, true);
      expect(meta.command.launcher).toBeUndefined();
      expect(fs.realpathSync(meta.command.executable)).toBe(launcher);
      expect(fs.readFileSync(path.join(result.runDir, 'managed.txt'), 'utf8')).toBe(
        `CODEX_MANAGED_BY_NPM=1\nCODEX_MANAGED_PACKAGE_ROOT=${path.dirname(path.dirname(launcher))}\n`,
      );
    },
    scaled(120_000),
  );
});

describe("the attempt's TMPDIR", () => {
  it(
    'is removed when the attempt ends, whether the engine left a tree in it or nothing',
    async () => {
      const leaves = {
        version: 1 as const,
        turns: [
          turns.shell(
            'mkdir -p "$TMPDIR/sub" && printf left > "$TMPDIR/sub/left.txt" && printf %s "$TMPDIR" > tmpdir.txt && ls -R "$TMPDIR" > listing.txt',
          ),
          turns.final('Done.'),
        ],
      };
      const left = await runAttempt({ paths, engine: 'codex', launch: 'start', prompt: 'go', script: leaves });
      expect(left.completion.state, left.error?.message).toBe('completed');
      const tmp = JSON.parse(fs.readFileSync(left.audit.meta, 'utf8')).env.TMPDIR as string;
      expect(fs.readFileSync(path.join(left.runDir, 'tmpdir.txt'), 'utf8')).toBe(tmp);
      expect(fs.readFileSync(path.join(left.runDir, 'listing.txt'), 'utf8')).toContain('left.txt');
      expect(fs.existsSync(tmp)).toBe(false);

      const nothing = await runAttempt({
        paths,
        engine: 'codex',
        launch: 'start',
        prompt: 'go',
        script: { version: 1 as const, turns: [turns.final('Done.')] },
      });
      expect(nothing.completion.state, nothing.error?.message).toBe('completed');
      const empty = JSON.parse(fs.readFileSync(nothing.audit.meta, 'utf8')).env.TMPDIR as string;
      expect(empty).not.toBe(tmp);
      expect(fs.existsSync(empty)).toBe(false);
      expect(fs.existsSync(path.dirname(empty))).toBe(true);
    },
    scaled(180_000),
  );
});
