import { lazy, Suspense } from 'react';
import { Navigate, NavLink, Outlet, Route, Routes, useLocation } from 'react-router-dom';
import { AgentsPage } from './pages/agents/AgentsPage.js';
import { GuardrailsPage } from './pages/guardrails/GuardrailsPage.js';
import { KeysPage } from './pages/KeysPage.js';
import { LogDetailPage } from './pages/LogDetailPage.js';
import { LogsPage } from './pages/LogsPage.js';
import { McpServersPage } from './pages/McpServersPage.js';
import { ProvidersPage } from './pages/providers/ProvidersPage.js';
import { ModelsPage } from './pages/catalog/ModelsPage.js';
import { RoutingPage } from './pages/catalog/RoutingPage.js';
import { HealthPage } from './pages/overview/HealthPage.js';
import { OverviewPage } from './pages/overview/OverviewPage.js';
import { SignInPage } from './pages/SignInPage.js';
import { useSession } from './session.js';

// The pages built on large libraries (the graph canvas, the charts) load when first opened,
// so signing in and reading the log do not wait for them.
const AgentEditorPage = lazy(() => import('./pages/agents/AgentEditorPage.js').then((page) => ({ default: page.AgentEditorPage })));
const PlaygroundPage = lazy(() => import('./pages/playground/PlaygroundPage.js').then((page) => ({ default: page.PlaygroundPage })));
const UsagePage = lazy(() => import('./pages/UsagePage.js').then((page) => ({ default: page.UsagePage })));
const UsersPage = lazy(() => import('./pages/users/UsersPage.js').then((page) => ({ default: page.UsersPage })));
const TeamsPage = lazy(() => import('./pages/teams/TeamsPage.js').then((page) => ({ default: page.TeamsPage })));
const BudgetsPage = lazy(() => import('./pages/budgets/BudgetsPage.js').then((page) => ({ default: page.BudgetsPage })));
const AuditPage = lazy(() => import('./pages/audit/AuditPage.js').then((page) => ({ default: page.AuditPage })));

/** What a role may open: an admin everything; a team admin its teams' keys and agents too; a viewer the overview, log and usage. */
function accessOf(role: string) {
  return { isAdmin: role === 'admin', managesKeys: role === 'admin' || role === 'team_admin', seesOverview: role !== 'team_admin' };
}

/** The pages and who may see them; the gateway enforces the same roles on every call. */
export function App() {
  const { session, loading } = useSession();
  const location = useLocation();
  if (loading) return <p className="loading" role="status">Loading…</p>;
  if (session === null) {
    return (
      <Routes>
        <Route path="/sign-in" element={<SignInPage />} />
        <Route path="*" element={<Navigate to="/sign-in" replace state={{ from: location.pathname + location.search }} />} />
      </Routes>
    );
  }
  const { isAdmin, managesKeys, seesOverview } = accessOf(session.user.role);
  // The overview is the landing of every role that may read it (a team admin sees only its teams' keys).
  const home = seesOverview ? '/overview' : '/keys';
  return (
    <Routes>
      <Route element={<Layout />}>
        <Route index element={<Navigate to={home} replace />} />
        <Route path="/sign-in" element={<Navigate to={home} replace />} />
        {seesOverview && <Route path="/overview" element={<OverviewPage />} />}
        {seesOverview && <Route path="/health" element={<HealthPage />} />}
        {managesKeys && <Route path="/keys" element={<KeysPage />} />}
        {managesKeys && <Route path="/teams" element={<TeamsPage />} />}
        <Route path="/budgets" element={<BudgetsPage />} />
        {managesKeys && <Route path="/agents" element={<AgentsPage />} />}
        {managesKeys && <Route path="/agents/:slug" element={<AgentEditorPage />} />}
        {isAdmin && <Route path="/playground" element={<PlaygroundPage />} />}
        {isAdmin && <Route path="/mcp" element={<McpServersPage />} />}
        {isAdmin && <Route path="/providers" element={<ProvidersPage />} />}
        {isAdmin && <Route path="/models" element={<ModelsPage />} />}
        {isAdmin && <Route path="/routing" element={<RoutingPage />} />}
        {isAdmin && <Route path="/users" element={<UsersPage />} />}
        {isAdmin && <Route path="/audit" element={<AuditPage />} />}
        {isAdmin && <Route path="/guardrails" element={<GuardrailsPage />} />}
        <Route path="/logs" element={<LogsPage />} />
        <Route path="/logs/:requestId" element={<LogDetailPage />} />
        <Route path="/usage" element={<UsagePage />} />
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}

function Layout() {
  const { session, signOut } = useSession();
  const { isAdmin, managesKeys, seesOverview } = accessOf(session?.user.role ?? 'viewer');
  return (
    <>
      <a className="skip-link" href="#main">Skip to content</a>
      <header className="top-bar">
        <span className="brand">modelgate</span>
        <nav aria-label="Dashboard">
          <ul>
            {seesOverview && (
              <li>
                <NavLink to="/overview">Overview</NavLink>
              </li>
            )}
            {managesKeys && (
              <li>
                <NavLink to="/keys">Keys</NavLink>
              </li>
            )}
            {managesKeys && (
              <li>
                <NavLink to="/teams">Teams</NavLink>
              </li>
            )}
            <li>
              <NavLink to="/budgets">Budgets</NavLink>
            </li>
            {managesKeys && (
              <li>
                <NavLink to="/agents">Agents</NavLink>
              </li>
            )}
            <li>
              <NavLink to="/logs">Request log</NavLink>
            </li>
            <li>
              <NavLink to="/usage">Usage</NavLink>
            </li>
            {isAdmin && (
              <li>
                <NavLink to="/playground">Playground</NavLink>
              </li>
            )}
            {isAdmin && (
              <li>
                <NavLink to="/mcp">MCP servers</NavLink>
              </li>
            )}
            {isAdmin && (
              <li>
                <NavLink to="/providers">Providers</NavLink>
              </li>
            )}
            {isAdmin && (
              <li>
                <NavLink to="/models">Models</NavLink>
              </li>
            )}
            {isAdmin && (
              <li>
                <NavLink to="/routing">Routing</NavLink>
              </li>
            )}
            {seesOverview && (
              <li>
                <NavLink to="/health">Health</NavLink>
              </li>
            )}
            {isAdmin && (
              <li>
                <NavLink to="/users">Users</NavLink>
              </li>
            )}
            {isAdmin && (
              <li>
                <NavLink to="/audit">Audit log</NavLink>
              </li>
            )}
            {isAdmin && (
              <li>
                <NavLink to="/guardrails">Guardrails</NavLink>
              </li>
            )}
          </ul>
        </nav>
        <div className="account">
          <span>
            {session?.user.email} <span className="role">({session?.user.role})</span>
          </span>
          <button type="button" className="secondary" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Suspense fallback={<p className="loading" role="status">Loading…</p>}>
          <Outlet />
        </Suspense>
      </main>
    </>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        This page does not exist, or your account may not open it. <NavLink to="/logs">Open the request log</NavLink>.
      </p>
    </section>
  );
}
