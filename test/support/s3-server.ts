import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

// A real server that speaks the S3 protocol (s3rver, from npm), started by the tests themselves so
// CI needs nothing installed. With CI=true a server that cannot start fails the suite, never skips it.

// The SDK's notice that its 2027 releases need Node 22 says nothing about these tests.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export interface S3Server {
  endpoint: string;
  bucket: string;
  /** What a gateway needs to use it: FILES_STORE and the standard AWS variables. */
  env(prefix?: string): Record<string, string>;
  stop(): Promise<void>;
}

export async function startS3Server(bucket = 'results'): Promise<S3Server> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: (prefix = '') => ({
      FILES_STORE: `s3://${bucket}${prefix ? `/${prefix}` : ''}`,
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: 'us-east-1',
      // s3rver's fixed credentials.
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    }),
    async stop() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The S3 server, or undefined when it cannot start outside CI (the S3 cases are then skipped, said so). */
export async function s3ServerForTests(): Promise<S3Server | undefined> {
  try {
    return await startS3Server();
  } catch (err) {
    if (process.env.CI === 'true') throw new Error(`the S3 test server did not start (CI=true: failing, not skipping): ${(err as Error).message}`);
    console.warn(`S3 cases skipped: the S3 test server did not start: ${(err as Error).message}`);
    return undefined;
  }
}
