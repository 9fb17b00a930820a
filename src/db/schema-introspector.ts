import { PostgresDialect, PostgresIntrospector, sql, type DatabaseIntrospector, type DatabaseMetadata, type Kysely, type TableMetadata } from 'kysely';

/**
 * Kysely's migrator asks whether its own tables exist by reading every column of every schema in
 * the database (PostgresIntrospector.getTables). Beside many schemas (CI's test run keeps one per
 * test database) that read took seconds, and a column renamed in any of them meanwhile failed it.
 * The gateway lives in one schema, the connection's current one, so only that one is read.
 */
export class OneSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new OneSchemaIntrospector(db);
  }
}

interface ColumnRow {
  table: string;
  kind: string;
  schema: string;
  column: string | null;
  type: string | null;
  type_schema: string | null;
  not_null: boolean | null;
  has_default: boolean | null;
}

class OneSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<any>;
  readonly #schemas: PostgresIntrospector;

  constructor(db: Kysely<any>) {
    this.#db = db;
    this.#schemas = new PostgresIntrospector(db);
  }

  getSchemas() {
    return this.#schemas.getSchemas();
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.relname as "table", c.relkind as kind, ns.nspname as schema, a.attname as "column",
             typ.typname as type, tns.nspname as type_schema, a.attnotnull as not_null, a.atthasdef as has_default
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      left join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      left join pg_catalog.pg_type typ on typ.oid = a.atttypid
      left join pg_catalog.pg_namespace tns on tns.oid = typ.typnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
      order by c.relname, a.attnum`.execute(this.#db);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      let table = tables.get(row.table);
      if (!table) {
        table = { name: row.table, schema: row.schema, isView: row.kind === 'v', columns: [] };
        tables.set(row.table, table);
      }
      if (row.column === null) continue;
      table.columns.push({
        name: row.column,
        dataType: row.type ?? '',
        dataTypeSchema: row.type_schema ?? undefined,
        isNullable: !row.not_null,
        hasDefaultValue: !!row.has_default,
        isAutoIncrementing: false, // not read: the migrator asks only for the tables' names
      });
    }
    return [...tables.values()];
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
}
