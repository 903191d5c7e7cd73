declare const everything: {
  /** Adds two numbers */
  add(args: {
    /** First number */
    a: number;
    /** Second number */
    b: number;
  }): Promise<unknown>;

  /** Demonstrates how annotations can be used to provide metadata about content */
  annotatedMessage(args: {
    /** Type of message to demonstrate different annotation patterns */
    messageType: "error" | "success" | "debug";
    /**
     * Whether to include an example image
     * @default false
     */
    includeImage?: boolean;
  }): Promise<unknown>;

  /** Echoes back the input */
  echo(args: {
    /** Message to echo */
    message: string;
  }): Promise<unknown>;

  /** Returns a resource reference that can be used by MCP clients */
  getResourceReference(args: {
    /** ID of the resource to reference (1-100) */
    resourceId: number;
  }): Promise<unknown>;

  /** Returns the MCP_TINY_IMAGE */
  getTinyImage(args?: {}): Promise<unknown>;

  /** Demonstrates a long running operation with progress updates */
  longRunningOperation(args?: {
    /**
     * Duration of the operation in seconds
     * @default 10
     */
    duration?: number;
    /**
     * Number of steps in the operation
     * @default 5
     */
    steps?: number;
  }): Promise<unknown>;

  /** Prints all environment variables, helpful for debugging MCP server configuration */
  printEnv(args?: {}): Promise<unknown>;

  /** Samples from an LLM using MCP's sampling feature */
  sampleLLM(args: {
    /** The prompt to send to the LLM */
    prompt: string;
    /**
     * Maximum number of tokens to generate
     * @default 100
     */
    maxTokens?: number;
  }): Promise<unknown>;

  /** Returns structured content along with an output schema for client data validation */
  structuredContent(args: {
    /** City name or zip code */
    location: string;
  }): Promise<{
    /** Temperature in celsius */
    temperature: number;
    /** Weather conditions description */
    conditions: string;
    /** Humidity percentage */
    humidity: number;
  }>;

  /** Compresses the provided resource files (mapping of name to URI, which can be a data URI) to a zip file, which it returns as a data URI resource link. */
  zip(args: {
    /** Mapping of file names to URLs to include in the zip */
    files: { [key: string]: string };
  }): Promise<unknown>;
};
