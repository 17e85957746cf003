import type { RoleGrant } from './types.js';

/** Which provider groups give which role (auth.oidc.roles of the config file). */
export interface RoleMapping {
  admin: readonly string[];
  viewer: readonly string[];
  /** Patterns with `{team}` where the group names a team id: `modelgate-{team}-admins`. */
  teamAdmin: readonly string[];
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The team id a group names under a pattern, if it matches. */
function teamOf(pattern: string, group: string): string | undefined {
  const [before, after] = pattern.split('{team}') as [string, string];
  const match = new RegExp(`^${escaped(before)}([a-z0-9][a-z0-9_-]{0,63})${escaped(after)}$`).exec(group);
  return match?.[1];
}

/**
 * The role a single sign-on gives from the groups claim (a list of strings, or one string):
 * `admin` wins over `team_admin`, which wins over `viewer`; a team admin manages every team
 * its groups name. No group that maps: no role, and the sign-in is refused.
 */
export function roleGrantOf(claim: unknown, mapping: RoleMapping): RoleGrant | undefined {
  const groups = (Array.isArray(claim) ? claim : [claim]).filter((group): group is string => typeof group === 'string');
  if (groups.some((group) => mapping.admin.includes(group))) return { role: 'admin', teamIds: [] };
  const teamIds = [...new Set(groups.flatMap((group) => mapping.teamAdmin.flatMap((pattern) => teamOf(pattern, group) ?? [])))].sort();
  if (teamIds.length > 0) return { role: 'team_admin', teamIds };
  if (groups.some((group) => mapping.viewer.includes(group))) return { role: 'viewer', teamIds: [] };
  return undefined;
}
