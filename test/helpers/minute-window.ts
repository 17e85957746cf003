/**
 * Requests-per-minute counters start over at each UTC minute. A test that spends a limit and
 * expects the next request refused waits here, when the minute is nearly over, until the next
 * one starts, so all its requests fall in one window. Otherwise a boundary between them admits
 * the request the test expects refused, in about one run of every (60 s ÷ the test's length).
 */
export async function awayFromMinuteBoundary(marginMs = 10_000): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 60_000 - marginMs) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
}
