/**
 * What `modelgate serve` prints after its start-up report while no dashboard account exists:
 * how to create the first one (the report already names the dashboard's URL).
 */
export function firstAccountAdvice(hasAccounts: boolean): string {
  if (hasAccounts) return '';
  return 'No dashboard account yet. Create the first (an admin) in another terminal, in this directory:\n  npx modelgate users create --email you@example.com\n';
}
