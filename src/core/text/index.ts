export type * from './parts.ts';
export type * from './request.ts';
export type * from './answer.ts';
export type * from './stream.ts';
export { sseText } from './stream.ts';
export * from './errors.ts';
export * from './helpers.ts';
export * from './accumulate.ts';
export * from './read.ts';
