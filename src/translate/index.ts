/** Native output → RASP → FCMP, the completion judge and translate views 1–3. */
export * from './line-splitter.js';
export * from './rasp-builder.js';
export * from './completion.js';
export * from './fcmp.js';
export * from './views.js';
export * from './conformance.js';
export * from './feed.js';
export * from './terminal-text.js';
export * from './recorded.js';
export * from './recorded-stream.js';
export * from '../engines/check-output.js';
export * from './view-sink.js';
