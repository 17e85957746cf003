import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Kind, type TSchema } from '@sinclair/typebox';
import { ConfigSchema, ENVIRONMENT_SETTINGS, RoutingEntrySchema } from '../src/config/index.js';

const docs = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');

/** Leaf setting paths of the schema (objects are walked; arrays and records are leaves). */
function settingPaths(schema: TSchema, prefix: string): string[] {
  if (schema[Kind] === 'Object' && schema.properties !== undefined) {
    return Object.entries(schema.properties as Record<string, TSchema>).flatMap(([name, child]) =>
      settingPaths(child, prefix === '' ? name : `${prefix}.${name}`),
    );
  }
  return [prefix];
}

test('docs/configuration.md names every environment variable', () => {
  for (const setting of ENVIRONMENT_SETTINGS) {
    for (const variable of setting.variables) assert.ok(docs.includes(`\`${variable}\``), `${variable} is not documented`);
  }
});

test('docs/configuration.md names every config-file setting', () => {
  for (const path of settingPaths(ConfigSchema, '')) {
    const leaf = path.split('.').at(-1)!;
    const documented = docs.includes(`\`${path}\``) || docs.includes(`\`${path}[]\``) || (path.includes('mediaStore.s3') && docs.includes(leaf));
    assert.ok(documented, `${path} is not documented`);
  }
});

/** Leaf field paths of a routing entry, arrays of objects walked too (`routing[].deployments[].weight`). */
function entryPaths(schema: TSchema, prefix: string): string[] {
  if (schema[Kind] === 'Array' && (schema.items as TSchema)[Kind] === 'Object') return entryPaths(schema.items as TSchema, `${prefix}[]`);
  if (schema[Kind] !== 'Object' || schema.properties === undefined) return [];
  return Object.entries(schema.properties as Record<string, TSchema>).flatMap(([name, child]) => {
    const inner = entryPaths(child, `${prefix}.${name}`);
    return inner.length > 0 ? inner : [`${prefix}.${name}`];
  });
}

test('docs/configuration.md names every field of a routing entry', () => {
  const paths = entryPaths(RoutingEntrySchema, 'routing[]');
  assert.ok(paths.includes('routing[].deployments[].apiKeyEnv') && paths.includes('routing[].cooldown.durationMs'));
  for (const path of paths) assert.ok(docs.includes(`\`${path}\``), `${path} is not documented`);
});
