import type { JsonObject } from '../../model-api/index.js';

/**
 * The Gemini API's `Schema` (an OpenAPI 3.0 subset: upper-case types, `nullable`) as the JSON
 * Schema the internal call carries (function parameters, `response_format`). Members JSON
 * Schema has no use for (`propertyOrdering`, `example`) are left out.
 */
export function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as JsonObject;
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(source)) {
    switch (key) {
      case 'type':
        result.type = typeof value === 'string' ? value.toLowerCase() : value;
        break;
      case 'nullable':
      case 'propertyOrdering':
      case 'example':
        break;
      case 'properties':
        result.properties = typeof value === 'object' && value !== null ? Object.fromEntries(Object.entries(value).map(([name, child]) => [name, jsonSchemaOf(child)])) : value;
        break;
      case 'items':
      case 'anyOf':
        result[key] = jsonSchemaOf(value);
        break;
      default:
        result[key] = value;
    }
  }
  if (source.nullable === true && typeof result.type === 'string') result.type = [result.type, 'null'];
  return result;
}
