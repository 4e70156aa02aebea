/**
 * Tool calls normalized across engines: the command without the engine's wrapper, a numeric exit code from
 * whatever evidence has it (result event, output text, or what the engine sent back to the model), and a
 * status derived from it — so `toHaveCalledTool({ command, exitCode })` means the same on every engine.
 */
import { describe, expect, it } from 'vitest';
import type { RaspData, RaspEvent } from '../../src/protocol/index.js';
import { raspEvents } from '../helpers/rasp-events.js';
import { exitCodeFromText } from '../../src/engines/parse-helpers.js';
import { exitCodesFromModelRequests, shellCommandOf } from '../../src/translate/tool-calls.js';
import { createFcmpTranslator, translateRaspToFcmp } from '../../src/translate/fcmp.js';
import { toolCallsOf } from '../../src/translate/fcmp-tool-calls.js';
import { transcript } from '../../src/vitest/matchers.js';

const rasp = (...data: RaspData[]): RaspEvent[] => raspEvents('gemini', ...data);

const translation = {
  runId: 'r',
  engine: 'gemini',
  attempt: 1,
  seqStart: 0,
  launch: 'start',
  errorPatterns: [],
} as const;

/** The tool calls every view shows: normalized once, by the FCMP translator, read back from its events. */
function collectToolCalls(events: RaspEvent[], toolExitCodes?: ReadonlyMap<string, number>) {
  return toolCallsOf(
    translateRaspToFcmp(events, { ...translation, ...(toolExitCodes ? { toolExitCodes } : {}) }),
    events,
  );
}

describe('tool call normalization', () => {
  it('removes the shell wrapper codex reports, in string and argv form', () => {
    expect(shellCommandOf({ command: "/bin/bash -lc 'echo a; exit 3'" })).toBe('echo a; exit 3');
    expect(shellCommandOf({ command: "/bin/bash -lc 'printf '\\''%s'\\'' x > stats.json'" })).toBe(
      "printf '%s' x > stats.json",
    );
    expect(shellCommandOf({ command: 'bash -c "echo \\"hi\\""' })).toBe('echo "hi"');
    expect(shellCommandOf({ command: ['/bin/bash', '-lc', 'ls -la'] })).toBe('ls -la');
    expect(shellCommandOf({ command: 'ls -la', description: 'x' })).toBe('ls -la');
    expect(shellCommandOf({ path: 'a.txt' })).toBeNull();
  });

  it("reads exit codes from output text in each engine's wording", () => {
    expect(exitCodeFromText('Exit code 3\nsome output')).toBe(3);
    expect(exitCodeFromText('Output: x\nExit Code: 2\nProcess Group PGID: 9')).toBe(2);
    expect(exitCodeFromText('the command exited with code 7')).toBe(7);
    expect(exitCodeFromText('no code here')).toBeNull();
  });

  it('gives a gemini shell result (completed, null) its exit code from the function response sent to the model', () => {
    const events = rasp(
      {
        type: 'engine.tool.call',
        call_id: 'run_shell_command__run_shell_command_17_0',
        kind: 'shell',
        name: 'run_shell_command',
        input: { command: 'exit 3' },
      },
      {
        type: 'engine.tool.result',
        call_id: 'run_shell_command__run_shell_command_17_0',
        status: 'completed',
        output: 'some output',
        exit_code: null,
      },
    );
    const requests = [
      {
        body: {
          contents: [
            {
              role: 'user',
              parts: [
                {
                  functionResponse: {
                    id: 'run_shell_command_17_0',
                    name: 'run_shell_command',
                    response: {
                      output: '<untrusted_context>\nOutput: some output\nExit Code: 3\n</untrusted_context>',
                    },
                  },
                },
              ],
            },
          ],
        },
      },
    ];
    const codes = exitCodesFromModelRequests(requests);
    expect(collectToolCalls(events, codes)).toEqual([
      expect.objectContaining({ command: 'exit 3', status: 'failed', exitCode: 3 }),
    ]);
    // A successful gemini command states no code, only its process group: exit 0.
    const ok = exitCodesFromModelRequests([
      {
        body: {
          contents: [
            {
              parts: [
                {
                  functionResponse: {
                    id: 'x1',
                    response: {
                      output: '<untrusted_context>\nOutput: (empty)\nProcess Group PGID: 22428\n</untrusted_context>',
                    },
                  },
                },
              ],
            },
          ],
        },
      },
    ]);
    expect(ok.get('x1')).toBe(0);
    // Without the request log the code is unknown, and the engine's status stands.
    expect(collectToolCalls(events)[0]).toMatchObject({ status: 'completed', exitCode: null });
    const fcmp = translateRaspToFcmp(
      [
        ...events,
        ...rasp({
          type: 'lifecycle.exited',
          exit_code: 0,
          signal: null,
          timed_out: false,
          canceled: false,
          duration_ms: 1,
        }),
      ],
      {
        runId: 'r',
        engine: 'gemini',
        attempt: 1,
        seqStart: 0,
        launch: 'start',
        errorPatterns: [],
        toolExitCodes: codes,
      },
    );
    expect(fcmp.filter((e) => e.type.startsWith('tool.')).map((e) => [e.type, e.data])).toEqual([
      [
        'tool.call',
        {
          call_id: 'run_shell_command__run_shell_command_17_0',
          kind: 'shell',
          name: 'run_shell_command',
          command: 'exit 3',
          input_excerpt: null,
        },
      ],
      [
        'tool.result',
        {
          call_id: 'run_shell_command__run_shell_command_17_0',
          status: 'failed',
          exit_code: 3,
          output_excerpt: 'some output',
        },
      ],
    ]);
  });

  it('live, holds a shell result without an exit code until the next model request states it (starts now, completes later)', () => {
    const [call, result, message] = rasp(
      {
        type: 'engine.tool.call',
        call_id: 'run_shell_command__c1',
        kind: 'shell',
        name: 'run_shell_command',
        input: { command: 'exit 3' },
      },
      {
        type: 'engine.tool.result',
        call_id: 'run_shell_command__c1',
        status: 'completed',
        output: 'x',
        exit_code: null,
      },
      { type: 'engine.assistant.message', message_id: 'm', text: 'done', final: true },
    );
    const translator = createFcmpTranslator({ ...translation, awaitModelExitCodes: true });
    expect(translator.push(call!).map((e) => e.type)).toEqual(['conversation.started', 'tool.call']);
    expect(translator.push(result!)).toEqual([]);
    expect(translator.heldResults).toBe(1);
    // A request that states another call's code completes nothing.
    expect(translator.learnExitCodes(new Map([['other', 0]]))).toEqual([]);
    const completed = translator.learnExitCodes(new Map([['c1', 3]]));
    expect(completed).toMatchObject([
      {
        type: 'tool.result',
        raw_ref: result!.raw_ref,
        data: { call_id: 'run_shell_command__c1', status: 'failed', exit_code: 3 },
      },
    ]);
    expect(translator.heldResults).toBe(0);
    expect(translator.push(message!).map((e) => e.type)).toEqual(['assistant.message.final']);
    // One no request states is given at the end as the engine reported it (never abandoned: its result came).
    const again = createFcmpTranslator({ ...translation, awaitModelExitCodes: true });
    again.push(call!);
    again.push(result!);
    const end = again.finish();
    expect(end.filter((e) => e.type === 'tool.result')).toMatchObject([
      { data: { call_id: 'run_shell_command__c1', status: 'completed', exit_code: null } },
    ]);
    expect(end.some((e) => e.type === 'diagnostic.warning')).toBe(false);
  });

  it('derives an opencode shell status from its exit code (completed, 3 → failed)', () => {
    const calls = collectToolCalls(
      rasp(
        { type: 'engine.tool.call', call_id: 'c', kind: 'shell', name: 'bash', input: { command: 'exit 3' } },
        { type: 'engine.tool.result', call_id: 'c', status: 'completed', output: '', exit_code: 3 },
      ),
    );
    expect(calls[0]).toMatchObject({ status: 'failed', exitCode: 3 });
  });

  it('bounds the output excerpt in FCMP and shows tool calls in a matcher transcript', () => {
    const big = 'x'.repeat(5000);
    const events = rasp(
      { type: 'engine.tool.call', call_id: 'c', kind: 'shell', name: 'Bash', input: { command: 'cat big' } },
      { type: 'engine.tool.result', call_id: 'c', status: 'completed', output: big, exit_code: 0 },
    );
    const fcmp = translateRaspToFcmp(events, {
      runId: 'r',
      engine: 'claude',
      attempt: 1,
      seqStart: 0,
      launch: 'start',
      errorPatterns: [],
    });
    const result = fcmp.find((e) => e.type === 'tool.result')!.data as { output_excerpt: string };
    expect(result.output_excerpt.length).toBeLessThan(2100);
    expect(result.output_excerpt).toContain('3000 more characters');
    const text = transcript({
      completion: { state: 'failed', reason: 'x' },
      fcmp,
      toolCalls: collectToolCalls(events),
    });
    expect(text).toContain('Tool calls (1):');
    expect(text).toContain('shell Bash: cat big → completed, exit 0');
  });
});
