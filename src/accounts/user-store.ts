import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { GatewayError, invalidBody } from '../errors/index.js';
import { parseJsonColumn, type Database, type DashboardUsersTable } from '../storage/index.js';
import { hashPassword, passwordProblem } from './password.js';
import type { RoleGrant, UserView } from './types.js';

export type UserRow = Selectable<DashboardUsersTable>;

const EMAIL = /^[^\s@]{1,200}@[^\s@]{1,200}$/;

/** Emails compare without case: `Ada@Example.com` and `ada@example.com` are one account. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** What an account made by single sign-on holds as its password hash: no password matches it. */
const NO_PASSWORD = 'sso';

/** The teams a `team_admin` account manages (none for the other roles). */
export function teamIdsOf(row: UserRow): string[] {
  return row.role === 'team_admin' ? (parseJsonColumn<string[]>(row.team_ids) ?? []) : [];
}

export function toUserView(row: UserRow): UserView {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    team_ids: teamIdsOf(row),
    sso: row.sso_subject !== null,
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

  async create(email: string, password: string, grant: RoleGrant): Promise<UserRow> {
    checkPassword(password);
    return this.insert(email, await hashPassword(password), grant, null);
  }

  /**
   * The account of a single sign-on: found by the provider's subject, else (when the provider
   * vouches for the email) the local account of that email, linked; else made. Its email,
   * role and teams follow the provider's answer at every sign-in.
   */
  async signedInBySso(subject: string, email: string, emailVerified: boolean, provided: RoleGrant): Promise<UserRow> {
    // Groups may name teams the gateway does not have: those give nothing.
    const grant = provided.role === 'team_admin' ? { role: provided.role, teamIds: await this.knownTeams(provided.teamIds) } : provided;
    if (grant.teamIds.length === 0 && grant.role === 'team_admin') {
      throw new GatewayError('insufficient_role', `Your groups name no team of this gateway (${provided.teamIds.join(', ')}). Ask an administrator.`);
    }
    const bySubject = await this.db.selectFrom('dashboard_users').selectAll().where('sso_subject', '=', subject).executeTakeFirst();
    const linked = bySubject ?? (emailVerified ? await this.findByEmail(email) : undefined);
    if (linked === undefined) return this.insert(email, NO_PASSWORD, grant, subject);
    return this.change(linked, { ...(await this.grantColumns(grant)), email: normalizeEmail(email), sso_subject: subject });
  }

  /** Changes an account's role and teams. */
  async setRole(idOrEmail: string, grant: RoleGrant): Promise<UserRow> {
    const row = await this.get(idOrEmail);
    return this.change(row, await this.grantColumns(grant));
  }

  private async insert(email: string, passwordHash: string, grant: RoleGrant, ssoSubject: string | null): Promise<UserRow> {
    const normalized = normalizeEmail(email);
    if (!EMAIL.test(normalized)) throw invalidBody('email must be an email address such as ops@example.com.', 'email');
    if ((await this.findByEmail(normalized)) !== undefined) {
      throw new GatewayError('conflict', `There is already an account for ${normalized}. Use users reset-password to change its password.`);
    }
    const now = Date.now();
    const row: UserRow = {
      id: `usr_${randomBytes(12).toString('hex')}`,
      email: normalized,
      ...(await this.grantColumns(grant)),
      password_hash: passwordHash,
      disabled: 0,
      created_at: now,
      updated_at: now,
      sso_subject: ssoSubject,
    };
    await this.db.insertInto('dashboard_users').values(row).execute();
    return row;
  }

  private async knownTeams(teamIds: readonly string[]): Promise<string[]> {
    if (teamIds.length === 0) return [];
    return (await this.db.selectFrom('teams').select('id').where('id', 'in', teamIds).execute()).map((team) => team.id);
  }

  /** A role's columns: a `team_admin` needs at least one team, each of which exists; the other roles hold none. */
  private async grantColumns(grant: RoleGrant): Promise<Pick<UserRow, 'role' | 'team_ids'>> {
    if (grant.role !== 'team_admin') {
      if (grant.teamIds.length > 0) throw invalidBody(`team_ids are for the team_admin role; a ${grant.role} sees every team.`, 'team_ids');
      return { role: grant.role, team_ids: null };
    }
    const teamIds = [...new Set(grant.teamIds)].sort();
    if (teamIds.length === 0) throw invalidBody('A team_admin needs team_ids: the teams whose projects it manages.', 'team_ids');
    const known = await this.knownTeams(teamIds);
    const missing = teamIds.filter((id) => !known.includes(id));
    if (missing.length > 0) throw invalidBody(`There is no team ${missing.join(', ')}. GET /admin/v1/teams lists them.`, 'team_ids');
    return { role: 'team_admin', team_ids: JSON.stringify(teamIds) };
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

  private async change(row: UserRow, changes: Partial<Pick<UserRow, 'disabled' | 'password_hash' | 'role' | 'team_ids' | 'email' | 'sso_subject'>>): Promise<UserRow> {
    const updated = { ...changes, updated_at: Date.now() };
    await this.db.updateTable('dashboard_users').set(updated).where('id', '=', row.id).execute();
    return { ...row, ...updated };
  }
}
