import { Type, type Static } from '@sinclair/typebox';
import type { MissingSetting, SettingVariable } from '../descriptor.js';

/**
 * `providers.bedrock`: a region, and an access key pair (perhaps with a session token), a
 * Bedrock API key, or AWS's standard credential chain (a named profile, SSO, web identity,
 * container and instance roles).
 */
export const BedrockSettingsSchema = Type.Object(
  {
    region: Type.Optional(Type.String({ pattern: '^[a-z0-9-]+$', description: 'AWS region of the Bedrock runtime endpoint' })),
    accessKeyId: Type.Optional(Type.String({ minLength: 1 })),
    secretAccessKey: Type.Optional(Type.String({ minLength: 1 })),
    sessionToken: Type.Optional(Type.String({ minLength: 1, description: 'of temporary credentials (an assumed role, SSO)' })),
    apiKey: Type.Optional(Type.String({ minLength: 1, description: 'a Bedrock API key, sent as Authorization: Bearer instead of signing' })),
    profile: Type.Optional(Type.String({ minLength: 1, description: 'a profile of the AWS shared config and credentials files (~/.aws), SSO and assumed roles included; implies credentialChain' })),
    credentialChain: Type.Optional(
      Type.Boolean({ description: "without an access key pair or API key: credentials from AWS's standard chain (environment, shared files, SSO, web identity on EKS, ECS container and EC2 instance roles), renewed before they expire" }),
    ),
    baseUrl: Type.Optional(Type.String({ pattern: '^https?://', description: 'default https://bedrock-runtime.<region>.amazonaws.com' })),
    inferenceProfile: Type.Union([Type.Literal('geo'), Type.Literal('global'), Type.Literal('none')], {
      default: 'geo',
      description: "the cross-region inference profile a chat model's base id is sent with: the region's geography (us., eu., apac.), global., or none",
    }),
  },
  { additionalProperties: false, default: {} },
);

export type BedrockSettings = Static<typeof BedrockSettingsSchema>;

/** The standard AWS variables (as the AWS CLI and SDKs read them), and Bedrock's own. */
export const BEDROCK_VARIABLES: readonly SettingVariable[] = [
  { field: 'region', variables: ['AWS_REGION', 'AWS_DEFAULT_REGION'], kind: 'string' },
  { field: 'accessKeyId', variables: ['AWS_ACCESS_KEY_ID'], kind: 'string' },
  { field: 'secretAccessKey', variables: ['AWS_SECRET_ACCESS_KEY'], kind: 'string' },
  { field: 'sessionToken', variables: ['AWS_SESSION_TOKEN'], kind: 'string' },
  { field: 'apiKey', variables: ['AWS_BEARER_TOKEN_BEDROCK'], kind: 'string' },
  { field: 'profile', variables: ['AWS_PROFILE'], kind: 'string' },
  { field: 'credentialChain', variables: ['BEDROCK_CREDENTIAL_CHAIN'], kind: 'boolean' },
  { field: 'baseUrl', variables: ['BEDROCK_BASE_URL'], kind: 'string' },
];

/** How a Bedrock call is authorised, in the order the settings are read. */
export function bedrockCredentialKind(settings: BedrockSettings): 'api-key' | 'access-key' | 'chain' | 'none' {
  if (settings.apiKey !== undefined) return 'api-key';
  if (settings.accessKeyId !== undefined && settings.secretAccessKey !== undefined) return 'access-key';
  return settings.profile !== undefined || settings.credentialChain === true ? 'chain' : 'none';
}

export function missingBedrockSetting(settings: BedrockSettings): MissingSetting | null {
  if (settings.region === undefined) return { variable: 'AWS_REGION', field: 'region' };
  if (bedrockCredentialKind(settings) !== 'none') return null;
  return { variable: 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_BEARER_TOKEN_BEDROCK, AWS_PROFILE, BEDROCK_CREDENTIAL_CHAIN=true)', field: 'accessKeyId' };
}

export function describeBedrock(settings: BedrockSettings): string {
  const kind = bedrockCredentialKind(settings);
  const chain = settings.profile !== undefined ? `AWS profile ${settings.profile}` : "AWS's credential chain";
  const credential =
    kind === 'api-key' ? 'Bedrock API key' : kind === 'chain' ? chain : settings.sessionToken !== undefined ? 'temporary access key' : kind === 'access-key' ? 'access key' : 'no credential';
  return `region ${settings.region ?? '(none)'}, ${credential}, inference profile ${settings.inferenceProfile}${settings.baseUrl === undefined ? '' : `, ${settings.baseUrl}`}`;
}

export function bedrockSecrets(settings: BedrockSettings): string[] {
  return [settings.accessKeyId, settings.secretAccessKey, settings.sessionToken, settings.apiKey].filter((value): value is string => value !== undefined);
}

/** The geography prefix of a region's cross-region inference profiles. */
function geographyOf(region: string): string {
  if (region.startsWith('us-gov-')) return 'us-gov';
  if (region.startsWith('us-')) return 'us';
  if (region.startsWith('eu-')) return 'eu';
  if (region.startsWith('ap-')) return 'apac';
  return 'global';
}

const PROFILE_PREFIX = /^(us|eu|apac|us-gov|global|jp|au|ca)\./;

/**
 * The id a chat call is sent with: an inference profile id or an ARN as it is; a base model id
 * with the configured profile's prefix (newer models are served on demand only through one).
 */
export function chatModelId(settings: BedrockSettings, upstreamId: string): string {
  if (upstreamId.startsWith('arn:') || PROFILE_PREFIX.test(upstreamId) || settings.inferenceProfile === 'none') return upstreamId;
  const prefix = settings.inferenceProfile === 'global' ? 'global' : geographyOf(settings.region ?? '');
  return `${prefix}.${upstreamId}`;
}
