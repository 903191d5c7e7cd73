declare const memory: {
  /** Add new observations to existing entities in the knowledge graph */
  add_observations(args: {
    observations: {
      /** The name of the entity to add the observations to */
      entityName: string;
      /** An array of observation contents to add */
      contents: string[];
    }[];
  }): Promise<unknown>;

  /** Create multiple new entities in the knowledge graph */
  create_entities(args: {
    entities: {
      /** The name of the entity */
      name: string;
      /** The type of the entity */
      entityType: string;
      /** An array of observation contents associated with the entity */
      observations: string[];
    }[];
  }): Promise<unknown>;

  /** Create multiple new relations between entities in the knowledge graph. Relations should be in active voice */
  create_relations(args: {
    relations: {
      /** The name of the entity where the relation starts */
      from: string;
      /** The name of the entity where the relation ends */
      to: string;
      /** The type of the relation */
      relationType: string;
    }[];
  }): Promise<unknown>;

  /** Delete multiple entities and their associated relations from the knowledge graph */
  delete_entities(args: {
    /** An array of entity names to delete */
    entityNames: string[];
  }): Promise<unknown>;

  /** Open specific nodes in the knowledge graph by their names */
  open_nodes(args: {
    /** An array of entity names to retrieve */
    names: string[];
  }): Promise<unknown>;

  /** Read the entire knowledge graph */
  read_graph(args?: { [key: string]: unknown }): Promise<{
    entities: {
      name: string;
      entityType: string;
      observations: string[];
    }[];
    relations: {
      from: string;
      to: string;
      relationType: string;
    }[];
  }>;

  /** Search for nodes in the knowledge graph based on a query */
  search_nodes(args: {
    /** The search query to match against entity names, types, and observation content */
    query: string;
  }): Promise<unknown>;
};
