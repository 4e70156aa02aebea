/**
 * A complete, successful reply of each vendor's wire API, as the orchestrator's HTTP callers read it: the body
 * tests send once a hostile or flaky server lets a call through.
 */

/** The wire APIs of the orchestrator's HTTP callers. */
export type CallerWire = 'openai' | 'anthropic';

/** A non-streamed reply whose text is `text`: an OpenAI chat completion or an Anthropic message. */
export function vendorOkReply(wire: CallerWire, text: string): Record<string, unknown> {
  return wire === 'openai'
    ? {
        id: 'c',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      }
    : {
        id: 'msg',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 2 },
      };
}
