/**
 * An agent that narrates its work (seed 002's `@Monologue`): `narrate(this, …)` inside a method, and the
 * `@Monologue()` decorator, which narrates each call once it settles. A synchronous method (`count`) stays
 * synchronous through the harness. Prints the agent and narrative events, one per line; no model, no engine.
 *
 *   npx tsx examples/fluent/narrating-agent.ts
 *
 * Decorator syntax needs a compiler that lowers TC39 decorators (tsc, tsx/esbuild); under Vite's default
 * transform use `narrateMethods(Reviewer, ['execute'])` instead.
 */
import { defineHarness, Monologue, narrate } from 'agent-harness/fluent';

class Reviewer {
  @Monologue()
  async execute(code: string): Promise<{ ok: boolean; lines: number }> {
    const lines = code.split('\n').length;
    narrate(this, `reading ${lines} lines`);
    return { ok: true, lines };
  }

  @Monologue({ summarize: (call) => `counted ${String(call.result)} words` })
  count(text: string): number {
    return text.split(/\s+/).filter(Boolean).length;
  }
}

const review = defineHarness({
  name: 'review',
  agents: { reviewer: Reviewer },
  run: async ({ agents }) => {
    await agents.reviewer.execute('const a = 1;\nconst b = 2;');
    const words = agents.reviewer.count('three small words'); // a number, not a promise
    return `${words} (${typeof words})`;
  },
});

const out = await review
  .create()
  .on('agent', (e) => console.log(`${e.type} ${e.name}`))
  .on('narrative', (e) => console.log(`narrative ${e.agent}: ${e.text}`))
  .run();
console.log(`count: ${out.result}`);
