import { monotonicFactory } from 'ulid';

const ulid = monotonicFactory();

export const newId = (prefix: string): string => `${prefix}_${ulid()}`;
