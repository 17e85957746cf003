/**
 * What `modelgate serve` prints about the dashboard once it listens: where it is, and while
 * no account exists, how to create the first one.
 */
export function dashboardGreeting(url: string, hasAccounts: boolean): string {
  const where = `dashboard: ${url}/dashboard/\n`;
  if (hasAccounts) return where;
  return `${where}No dashboard account yet. Create the first (an admin) in another terminal, in this directory:\n  npx modelgate users create --email you@example.com\n`;
}
