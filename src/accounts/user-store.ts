import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { GatewayError, invalidBody } from '../errors/index.js';
import type { Database, DashboardUsersTable } from '../storage/index.js';
import { hashPassword, passwordProblem } from './password.js';
import type { Role, UserView } from './types.js';

export type UserRow = Selectable<DashboardUsersTable>;

const EMAIL = /^[^\s@]{1,200}@[^\s@]{1,200}$/;

/** Emails compare without case: `Ada@Example.com` and `ada@example.com` are one account. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function toUserView(row: UserRow): UserView {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    disabled: row.disabled === 1,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem !== undefined) throw invalidBody(`password ${problem}.`, 'password');
}

/** Dashboard accounts in the database; passwords only as scrypt hashes. */
export class UserStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(email: string, password: string, role: Role): Promise<UserRow> {
    const normalized = normalizeEmail(email);
    if (!EMAIL.test(normalized)) throw invalidBody('email must be an email address such as ops@example.com.', 'email');
    checkPassword(password);
    if ((await this.findByEmail(normalized)) !== undefined) {
      throw new GatewayError('conflict', `There is already an account for ${normalized}. Use users reset-password to change its password.`);
    }
    const now = Date.now();
    const row: UserRow = {
      id: `usr_${randomBytes(12).toString('hex')}`,
      email: normalized,
      role,
      password_hash: await hashPassword(password),
      disabled: 0,
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('dashboard_users').values(row).execute();
    return row;
  }

  /** Whether any account exists (start-up tells how to create the first). */
  async exist(): Promise<boolean> {
    return (await this.db.selectFrom('dashboard_users').select('id').limit(1).executeTakeFirst()) !== undefined;
  }

  list(): Promise<UserRow[]> {
    return this.db.selectFrom('dashboard_users').selectAll().orderBy('email').execute();
  }

  findByEmail(email: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('dashboard_users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
  }

  find(id: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('dashboard_users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The account by id or email (the CLI takes either). */
  async get(idOrEmail: string): Promise<UserRow> {
    const row = idOrEmail.includes('@') ? await this.findByEmail(idOrEmail) : await this.find(idOrEmail);
    if (row === undefined) throw new GatewayError('not_found', `There is no dashboard account ${idOrEmail}. List them with GET /admin/v1/users.`);
    return row;
  }

  async setDisabled(idOrEmail: string, disabled: boolean): Promise<UserRow> {
    const row = await this.get(idOrEmail);
    return this.change(row, { disabled: disabled ? 1 : 0 });
  }

  async setPassword(idOrEmail: string, password: string): Promise<UserRow> {
    checkPassword(password);
    const row = await this.get(idOrEmail);
    return this.change(row, { password_hash: await hashPassword(password) });
  }

  private async change(row: UserRow, changes: Partial<Pick<UserRow, 'disabled' | 'password_hash'>>): Promise<UserRow> {
    const updated = { ...changes, updated_at: Date.now() };
    await this.db.updateTable('dashboard_users').set(updated).where('id', '=', row.id).execute();
    return { ...row, ...updated };
  }
}
