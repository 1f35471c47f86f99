// A handler built on the npm custom-resource-helper library, steered like
// cfn-response-handler.js.
const { customResourceHelper } = require("custom-resource-helper");

const make = (event) => {
  const p = event.ResourceProperties || {};
  if (p.Fail === "true") throw new Error("asked to fail");
  return {
    physicalResourceId: p.Name + "-v" + (p.Version || "1"),
    responseData: { Greeting: "hello " + p.Name, Version: p.Version || "1" },
  };
};

exports.handler = customResourceHelper(() => ({
  onCreate: async (event) => make(event),
  onUpdate: async (event) => make(event),
  onDelete: async () => {},
}));
