import { describeLargeTables } from './helpers/large-tables.js';

describeLargeTables('postgres');
