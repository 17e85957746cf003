import type { UpstreamObjectRef } from '../types.js';
import { recordOf, recordsOf, UpstreamRefs } from '../upstream-refs.js';

/** A content part's uploaded file (`input_file`, `input_image` by `file_id`). */
function addContentFiles(refs: UpstreamRefs, parts: unknown, param: string): void {
  for (const [part, index] of recordsOf(parts)) refs.add('files', part.file_id, `${param}[${index}].file_id`);
}

/**
 * The objects of the vendor account a Responses request names (OpenAI's API reference): its
 * `conversation`, the stored `prompt` (and files among its variables), `item_reference` input
 * items, files of content parts, and the vector stores, containers and files of built-in tools.
 */
export function responsesUpstreamObjects(body: Record<string, unknown>): UpstreamObjectRef[] {
  const refs = new UpstreamRefs();
  const conversation = body.conversation;
  refs.add('conversations', typeof conversation === 'string' ? conversation : recordOf(conversation)?.id, typeof conversation === 'string' ? 'conversation' : 'conversation.id');
  const prompt = recordOf(body.prompt);
  if (prompt !== null) {
    refs.add('prompts', prompt.id, 'prompt.id');
    for (const [name, variable] of Object.entries(recordOf(prompt.variables) ?? {})) refs.add('files', recordOf(variable)?.file_id, `prompt.variables.${name}.file_id`);
  }
  for (const [item, index] of recordsOf(body.input)) {
    const param = `input[${index}]`;
    // An item of only an id is a reference too: `type` defaults to item_reference.
    if (item.type === 'item_reference' || (item.type === undefined && item.role === undefined && item.content === undefined)) refs.add('items', item.id, `${param}.id`);
    addContentFiles(refs, item.content, `${param}.content`);
    addContentFiles(refs, item.output, `${param}.output`);
  }
  for (const [tool, index] of recordsOf(body.tools)) {
    const param = `tools[${index}]`;
    if (tool.type === 'file_search') refs.addAll('vectorStores', tool.vector_store_ids, `${param}.vector_store_ids`);
    if (tool.type === 'code_interpreter') {
      const container = tool.container;
      refs.add('containers', container, `${param}.container`);
      refs.addAll('files', recordOf(container)?.file_ids, `${param}.container.file_ids`);
    }
  }
  return refs.found;
}
