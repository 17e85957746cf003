import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { POSTGRES_URL, createPostgresDatabase } from './databases.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import { startOpenAIFake, type OpenAIFake } from '../fakes/openai.js';

/** A fixed 32-byte key (base64): PostgreSQL mode requires MODELGATE_ENCRYPTION_KEY. */
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

/** Where gateways under test keep their data: pass `env` and `dataDir` to every gateway that should share it. */
export interface SharedStorage {
  env: Record<string, string>;
  dataDir: string;
  dispose(): Promise<void>;
}

export interface StorageBackend {
  name: string;
  /** A reason to skip, or false. */
  skip: string | false;
  create(): Promise<SharedStorage>;
}

function temporaryDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'modelgate-storage-'));
}

/** SQLite always; PostgreSQL (a fresh database per call) when TEST_DATABASE_URL is set. */
export const STORAGE_BACKENDS: readonly StorageBackend[] = [
  {
    name: 'SQLite',
    skip: false,
    async create() {
      const dataDir = temporaryDataDir();
      return { env: {}, dataDir, dispose: async () => rmSync(dataDir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'PostgreSQL',
    skip: POSTGRES_URL === undefined ? 'TEST_DATABASE_URL is not set' : false,
    async create() {
      const database = await createPostgresDatabase();
      const dataDir = temporaryDataDir();
      return {
        env: { DATABASE_URL: database.url, MODELGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY },
        dataDir,
        async dispose() {
          await database.drop();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  },
];

/** A backend's store opened directly, without a gateway: for tests of a domain module on both databases. */
export async function openBackendStorage(backend: StorageBackend): Promise<{ storage: Storage; close(): Promise<void> }> {
  const shared = await backend.create();
  const storage = await openStorage({ dataDir: shared.dataDir, databaseUrl: shared.env.DATABASE_URL });
  return {
    storage,
    async close() {
      await storage.close();
      await shared.dispose();
    },
  };
}

export interface BackendGateway {
  fake: OpenAIFake;
  gateway: TestGateway;
  close(): Promise<void>;
}

/** A gateway on `backend`'s storage in front of the OpenAI fake, and how to stop all three. */
export async function startBackendGateway(backend: StorageBackend): Promise<BackendGateway> {
  const fake = await startOpenAIFake();
  const shared = await backend.create();
  const gateway = await startTestGateway({
    dataDir: shared.dataDir,
    env: { ...shared.env, OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-test-credential-0123456789' },
  });
  return {
    fake,
    gateway,
    async close() {
      await gateway.close();
      await shared.dispose();
      await fake.close();
    },
  };
}
