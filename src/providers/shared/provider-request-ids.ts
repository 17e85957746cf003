/**
 * The providers' own ids of the calls made for each gateway request (OpenAI's `x-request-id`,
 * Anthropic's `request-id`, Gemini's `responseId`), held until the request's log record takes
 * them: they are what a vendor's support asks for. Adapters note them as responses arrive,
 * errors included, so no route has to carry them.
 */
export class ProviderRequestIds {
  private readonly byRequest = new Map<string, string[]>();

  /** `maxRequests` bounds what a request that is never logged could leave behind (oldest dropped). */
  constructor(private readonly maxRequests = 10_000) {}

  note(requestId: string, providerRequestId: string): void {
    const ids = this.byRequest.get(requestId);
    if (ids !== undefined) {
      if (!ids.includes(providerRequestId)) ids.push(providerRequestId);
      return;
    }
    if (this.byRequest.size >= this.maxRequests) this.byRequest.delete(this.byRequest.keys().next().value!);
    this.byRequest.set(requestId, [providerRequestId]);
  }

  /** The ids noted for a request, in call order, and forgets them; undefined when it made no provider call. */
  take(requestId: string): string[] | undefined {
    const ids = this.byRequest.get(requestId);
    if (ids !== undefined) this.byRequest.delete(requestId);
    return ids;
  }
}
