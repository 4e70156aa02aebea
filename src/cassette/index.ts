/** Cassettes: record an engine's conversation with the vendor once, replay it offline (see docs/cassettes.md). */
export * from './schema.js';
export * from './cassette-file.js';
export * from './redact.js';
export * from './normalize.js';
export * from './match.js';
export * from './record.js';
export * from './recorder.js';
export * from './mode.js';
export * from './session.js';
