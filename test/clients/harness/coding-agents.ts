/**
 * How each coding agent is pointed at the gateway and run non-interactively: its own config
 * files in a temporary HOME (nothing of the machine's user is read or written), telemetry,
 * update checks and other non-essential traffic off, permission prompts answered in advance
 * for its shell tool. These are the set-ups docs/clients.md gives users.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientName } from './installs.js';

export interface AgentRun {
  /** The gateway's base URL (scheme, host and port). */
  gatewayUrl: string;
  /** A gateway key (`sk-mg-…`). */
  key: string;
  /** The model the agent is told to use (a catalog id of any vendor); null: the agent's own default. */
  model: string | null;
  prompt: string;
  /** The temporary HOME, and the working directory the agent runs in. */
  home: string;
  workDir: string;
  /** Codex: ask for the Responses WebSocket mode (`supports_websockets`) before HTTP. */
  websockets?: boolean;
}

type NamedModelRun = AgentRun & { model: string };

export interface AgentInvocation {
  args: string[];
  env: Record<string, string>;
}

/** Variables every agent run gets on top of the temporary HOME. */
function baseEnv(run: AgentRun): Record<string, string> {
  return {
    HOME: run.home,
    XDG_CONFIG_HOME: join(run.home, '.config'),
    XDG_DATA_HOME: join(run.home, '.local', 'share'),
    XDG_CACHE_HOME: join(run.home, '.cache'),
    XDG_STATE_HOME: join(run.home, '.local', 'state'),
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: 'true',
  };
}

function writeFile(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

/**
 * Claude Code: ANTHROPIC_BASE_URL and the key as ANTHROPIC_AUTH_TOKEN (sent as a bearer),
 * `-p` print mode, the Bash tool allowed. Its model slots (the main model and the small fast
 * one of its background calls) are all set to the model under test, except for Claude models,
 * where its own default background model (a dated Haiku snapshot) is kept.
 */
function claudeCode(run: AgentRun, claudeModel: boolean): AgentInvocation {
  const model = run.model;
  const slots: Record<string, string> =
    model === null
      ? {}
      : claudeModel
        ? { ANTHROPIC_MODEL: model }
        : { ANTHROPIC_MODEL: model, ANTHROPIC_DEFAULT_OPUS_MODEL: model, ANTHROPIC_DEFAULT_SONNET_MODEL: model, ANTHROPIC_DEFAULT_HAIKU_MODEL: model, ANTHROPIC_SMALL_FAST_MODEL: model };
  return {
    args: ['-p', run.prompt, '--output-format', 'text', '--allowedTools', 'Bash'],
    env: {
      ...baseEnv(run),
      ANTHROPIC_BASE_URL: run.gatewayUrl,
      ANTHROPIC_AUTH_TOKEN: run.key,
      ...slots,
      CLAUDE_CONFIG_DIR: join(run.home, '.claude'),
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    },
  };
}

/** Codex: a model provider of its own in CODEX_HOME/config.toml, `wire_api = "responses"`, `codex exec`. */
function codex(run: NamedModelRun): AgentInvocation {
  const codexHome = join(run.home, '.codex');
  writeFile(
    join(codexHome, 'config.toml'),
    [
      `model = ${JSON.stringify(run.model)}`,
      'model_provider = "modelgate"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      'check_for_update_on_startup = false',
      '',
      '[model_providers.modelgate]',
      'name = "modelgate"',
      `base_url = ${JSON.stringify(`${run.gatewayUrl}/v1`)}`,
      'env_key = "MODELGATE_API_KEY"',
      'wire_api = "responses"',
      ...(run.websockets === true ? ['supports_websockets = true'] : []),
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[feedback]',
      'enabled = false',
      '',
    ].join('\n'),
  );
  return {
    args: ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '--color', 'never', run.prompt],
    env: { ...baseEnv(run), CODEX_HOME: codexHome, MODELGATE_API_KEY: run.key },
  };
}

/**
 * opencode: a provider of its own (the Anthropic Messages API through `@ai-sdk/anthropic`,
 * which opencode bundles) given inline in OPENCODE_CONFIG_CONTENT, `opencode run`.
 */
function opencode(run: NamedModelRun): AgentInvocation {
  const config = {
    $schema: 'https://opencode.ai/config.json',
    model: `modelgate/${run.model}`,
    small_model: `modelgate/${run.model}`,
    autoupdate: false,
    share: 'disabled',
    permission: { bash: 'allow', edit: 'allow', webfetch: 'deny' },
    provider: {
      modelgate: {
        npm: '@ai-sdk/anthropic',
        name: 'modelgate',
        options: { baseURL: `${run.gatewayUrl}/v1`, apiKey: run.key },
        models: { [run.model]: { name: run.model, tool_call: true } },
      },
    },
  };
  return {
    args: ['run', '--pure', '--model', `modelgate/${run.model}`, run.prompt],
    env: {
      ...baseEnv(run),
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
      OPENCODE_DISABLE_SHARE: '1',
      OPENCODE_DISABLE_CLAUDE_CODE: '1',
      OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
    },
  };
}

/** pi: a provider in its models.json speaking chat completions (`openai-completions`), `pi -p`. */
function pi(run: NamedModelRun): AgentInvocation {
  const agentDir = join(run.home, '.pi', 'agent');
  writeFile(
    join(agentDir, 'models.json'),
    JSON.stringify({ providers: { modelgate: { baseUrl: `${run.gatewayUrl}/v1`, api: 'openai-completions', apiKey: 'MODELGATE_API_KEY', models: [{ id: run.model }] } } }, null, 2),
  );
  writeFile(join(agentDir, 'settings.json'), JSON.stringify({ enableInstallTelemetry: false }, null, 2));
  return {
    args: ['-p', '--no-session', '--provider', 'modelgate', '--model', run.model, run.prompt],
    env: { ...baseEnv(run), PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: '1', PI_TELEMETRY: '0', PI_SKIP_VERSION_CHECK: '1', MODELGATE_API_KEY: run.key },
  };
}

/**
 * The Gemini CLI: the Gemini API at GOOGLE_GEMINI_BASE_URL with the key as GEMINI_API_KEY (sent
 * as x-goog-api-key), API-key auth chosen, usage statistics, telemetry and update checks off in
 * its settings.json, `gemini -p` with every tool call approved (`--approval-mode yolo`) in a
 * folder trusted for the session.
 */
function geminiCli(run: NamedModelRun): AgentInvocation {
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    model: { name: run.model },
  };
  writeFile(join(run.home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2));
  return {
    args: ['-p', run.prompt, '--model', run.model, '--approval-mode', 'yolo', '--skip-trust', '--output-format', 'text'],
    env: { ...baseEnv(run), GOOGLE_GEMINI_BASE_URL: run.gatewayUrl, GEMINI_API_KEY: run.key, GEMINI_CLI_NO_RELAUNCH: 'true' },
  };
}

export function agentInvocation(name: ClientName, run: AgentRun, options: { claudeModel: boolean }): AgentInvocation {
  if (run.model === null && name !== 'claude-code') throw new Error(`${name} is run on a model named by the test`);
  const named = { ...run, model: run.model ?? '' };
  switch (name) {
    case 'claude-code':
      return claudeCode(run, options.claudeModel);
    case 'codex':
      return codex(named);
    case 'opencode':
      return opencode(named);
    case 'pi':
      return pi(named);
    case 'gemini-cli':
      return geminiCli(named);
  }
}
