import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface RoutingReloadOptions {
  /** The config file to watch; undefined when there is none (SIGHUP still reloads). */
  file: string | undefined;
  /** Reads the configuration again and applies its routing; throws (a ConfigError) when it is invalid. `trigger`: SIGHUP or the file's change. */
  reload: (trigger: string) => void;
  log: {
    info(fields: Record<string, unknown>, message: string): void;
    error(fields: Record<string, unknown>, message: string): void;
  };
}

/** Changes of one save (editors write a file in several steps) are read once, after this quiet time. */
const SETTLE_MS = 150;

/**
 * Reloads the routing on SIGHUP and when the config file changes. Requests in flight keep the
 * plan they started with; an invalid file is reported and the routing in force stays.
 * The directory is watched, not the file: editors replace a file by renaming another over it.
 */
export function watchRoutingConfig(options: RoutingReloadOptions): () => void {
  const reload = (trigger: string) => {
    try {
      options.reload(trigger);
      options.log.info({ trigger }, 'routing reloaded from the configuration');
    } catch (error) {
      options.log.error({ trigger, reason: (error as Error).message }, 'routing not reloaded: the configuration is invalid; the routing in force stays');
    }
  };
  const onHangUp = () => reload('SIGHUP');
  process.on('SIGHUP', onHangUp);
  let watcher: FSWatcher | undefined;
  let settle: NodeJS.Timeout | undefined;
  if (options.file !== undefined) {
    const name = basename(options.file);
    watcher = watch(dirname(options.file), (_event, changed) => {
      if (changed !== null && changed !== name) return;
      clearTimeout(settle);
      settle = setTimeout(() => reload('config file changed'), SETTLE_MS);
    });
    watcher.on('error', () => undefined);
    watcher.unref();
  }
  return () => {
    process.off('SIGHUP', onHangUp);
    watcher?.close();
    clearTimeout(settle);
  };
}
