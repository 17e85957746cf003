import type { ProjectPolicyConfig } from '../config/index.js';

/** The kinds of vendor-account object a project can be granted (docs/security.md, "Upstream objects"). */
export type UpstreamObjectKind = keyof ProjectPolicyConfig['upstreamObjects'];

/** What a project may do beyond its keys' own settings, as the config file says (`projects.<id>`). */
export interface ProjectPolicy {
  /** Keys of the project with a monthly cost cap may use models the gateway cannot price. */
  readonly allowUnpriced: boolean;
  /** End users' ids are kept in the request log as an HMAC, not as given (decisions §15). */
  readonly hashEndUsers: boolean;
  /** Whether the project is granted this object of the vendor account (an id listed, or `*`). */
  grants(kind: UpstreamObjectKind, id: string): boolean;
}

const NO_POLICY: ProjectPolicy = { allowUnpriced: false, hashEndUsers: false, grants: () => false };

/** The per-project policies of the config file, by project id; a project not listed has none. */
export class ProjectPolicies {
  private readonly byProject = new Map<string, ProjectPolicy>();

  constructor(projects: Readonly<Record<string, ProjectPolicyConfig>> = {}) {
    for (const [id, policy] of Object.entries(projects)) {
      const granted = new Map<string, ReadonlySet<string>>(Object.entries(policy.upstreamObjects).map(([kind, ids]) => [kind, new Set(ids)]));
      this.byProject.set(id, {
        allowUnpriced: policy.allowUnpriced,
        hashEndUsers: policy.hashEndUsers,
        grants: (kind, objectId) => {
          const ids = granted.get(kind);
          return ids !== undefined && (ids.has('*') || ids.has(objectId));
        },
      });
    }
  }

  of(projectId: string): ProjectPolicy {
    return this.byProject.get(projectId) ?? NO_POLICY;
  }
}
