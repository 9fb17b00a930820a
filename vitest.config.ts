import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    pool: 'forks',
    globalSetup: ['test/postgres-schemas.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Spawned gateways and real ports: keep files from starving each other on a 2-core machine.
    maxWorkers: 2,
  },
});
