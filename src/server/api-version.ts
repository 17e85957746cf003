/** Version of the published interface description (spec: Versioning 2). */
export const API_VERSION = '1.4.2';
