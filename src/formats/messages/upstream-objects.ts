import type { UpstreamObjectRef } from '../types.js';
import { recordOf, recordsOf, UpstreamRefs } from '../upstream-refs.js';

/** Files of content blocks: an image or document whose source is a `file`, a `container_upload`; tool results' blocks too. */
function addBlockFiles(refs: UpstreamRefs, blocks: unknown, param: string): void {
  for (const [block, index] of recordsOf(blocks)) {
    const at = `${param}[${index}]`;
    const source = recordOf(block.source);
    if (source?.type === 'file') refs.add('files', source.file_id, `${at}.source.file_id`);
    if (block.type === 'container_upload') refs.add('files', block.file_id, `${at}.file_id`);
    if (block.type === 'tool_result') addBlockFiles(refs, block.content, `${at}.content`);
  }
}

/**
 * The objects of the vendor account a Messages request names (Anthropic's API reference):
 * files uploaded with the Files API, and the code-execution `container` it continues.
 */
export function messagesUpstreamObjects(body: Record<string, unknown>): UpstreamObjectRef[] {
  const refs = new UpstreamRefs();
  const container = body.container;
  refs.add('containers', typeof container === 'string' ? container : recordOf(container)?.id, typeof container === 'string' ? 'container' : 'container.id');
  for (const [message, index] of recordsOf(body.messages)) addBlockFiles(refs, message.content, `messages[${index}].content`);
  return refs.found;
}
