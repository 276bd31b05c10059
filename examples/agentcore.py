"""The gated drop-in for AgentCore Memory's Strands session manager.

    python examples/agentcore.py --offline                      # no AWS: a stubbed data plane
    python examples/agentcore.py --memory-id MEMORY_ID --region us-west-2 [--model-id MODEL]

COST WARNING. Against real AWS this example spends money: AgentCore Memory bills every
event it stores (each message the agent adds), every long-term record its strategies
extract and keep, and every retrieval call; the Bedrock model bills its tokens, including
the tokens of every injected memory. The stock session manager makes one retrieval call per
configured namespace on every user message; the gated one skips the call when the gate is
closed, and injects fewer records. Use a throwaway memory and delete it afterwards
(``aws bedrock-agentcore-control delete-memory --memory-id ...``).

AWS setup (once):

1. Credentials with access to Bedrock AgentCore and Bedrock in one region
   (``aws configure`` or environment variables). The session manager needs
   ``bedrock-agentcore:CreateEvent``, ``ListEvents``, ``GetEvent``, ``DeleteEvent`` and
   ``RetrieveMemoryRecords`` on the memory; the agent needs ``bedrock:InvokeModel*`` (or
   ``bedrock:Converse*``) on its model, with model access granted in the Bedrock console.
2. A memory with the two long-term strategies whose namespaces this example reads::

       from bedrock_agentcore.memory import MemoryClient
       memory = MemoryClient(region_name="us-west-2").create_memory_and_wait(
           name="recallwise_example",
           strategies=[
               {"semanticMemoryStrategy": {"name": "facts", "namespaces": ["/facts/{actorId}"]}},
               {"userPreferenceMemoryStrategy": {"name": "preferences",
                                                 "namespaces": ["/preferences/{actorId}"]}},
           ],
       )
       print(memory["id"])

   (or ``recallwise ingest`` with ``--store agentcore://MEMORY_ID?region=...`` to write
   records from your own conversation logs). Long-term extraction runs asynchronously on
   AWS's side: records appear a minute or so after the events that produced them.

Needs: pip install 'recallwise[agentcore]'.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any

import boto3
from bedrock_agentcore.memory.integrations.strands.config import AgentCoreMemoryConfig, RetrievalConfig
from strands import Agent

from recallwise.integrations.agentcore import GatedAgentCoreMemorySessionManager
from recallwise.testing import reply_model

TURNS = [
    "Hello!",
    "What should I have for dinner?",
    "Thanks!",
    "I'm booking a flight next week, anything to know?",
]
NAMESPACES = {
    "/facts/{actorId}": RetrievalConfig(top_k=10, relevance_score=0.2),
    "/preferences/{actorId}": RetrievalConfig(top_k=10, relevance_score=0.2),
}


def offline_session() -> tuple[Any, str]:
    """A boto3 session whose AgentCore data plane answers from memory (no network, no cost)."""
    from botocore.awsrequest import AWSResponse

    records = {
        "/facts/demo_user": [
            "The user is vegetarian.",
            "The user has a dog called Biscuit.",
            "The user always books an aisle seat.",
            "The user lives in Vancouver.",
        ],
        "/preferences/demo_user": [
            '{"context": "Booking flights", "preference": "Aisle seat", "categories": ["travel"]}'
        ],
    }
    retrievals: list[str] = []

    def answer(model: Any, params: dict[str, Any], **_: Any) -> Any:
        ok = AWSResponse("https://agentcore.offline", 200, {}, None)
        body = json.loads(params["body"]) if params.get("body") else {}
        now = datetime.now(UTC)
        if model.name == "RetrieveMemoryRecords":
            namespace = body.get("namespacePath") or body.get("namespace")
            retrievals.append(namespace)
            found = [
                {
                    "memoryRecordId": f"{namespace}-{i}".ljust(40, "0"),
                    "content": {"text": text},
                    "memoryStrategyId": "offline",
                    "namespaces": [namespace],
                    "createdAt": now,
                    "score": 0.5,
                }
                for i, text in enumerate(records.get(namespace, []))
            ]
            return ok, {"memoryRecordSummaries": found}
        if model.name == "ListEvents":
            return ok, {"events": []}
        if model.name == "CreateEvent":
            return ok, {
                "event": {
                    "memoryId": body.get("memoryId", ""),
                    "actorId": body["actorId"],
                    "sessionId": body.get("sessionId", ""),
                    "eventId": "offline-event",
                    "eventTimestamp": now,
                    "payload": [],
                }
            }
        raise RuntimeError(f"the offline stub does not answer {model.name}")

    session = boto3.Session(
        aws_access_key_id="offline", aws_secret_access_key="offline", region_name="us-west-2"
    )
    session.events.register("before-call.bedrock-agentcore", answer)
    answer.retrievals = retrievals  # type: ignore[attr-defined]
    return session, "offline-mem-abcdefghij"


def shown(messages: list[dict[str, Any]]) -> str:
    """The reply of the stand-in for the Bedrock model in --offline mode: what it was shown."""
    first = messages[-1]["content"][0].get("text", "")
    return first.replace("\n", " ") if first.startswith("<user_context>") else "(no memory injected)"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--offline", action="store_true", help="stub AWS; run without credentials or cost")
    parser.add_argument("--memory-id", help="an AgentCore memory id (see the setup above)")
    parser.add_argument("--region", default=None, help="AWS region of the memory")
    parser.add_argument("--actor", default="demo_user")
    parser.add_argument(
        "--model-id",
        default="us.anthropic.claude-3-5-haiku-20241022-v1:0",
        help="Bedrock model for the agent (default %(default)s)",
    )
    parser.add_argument("--stock", action="store_true", help="decider=None: upstream's behaviour, to compare")
    args = parser.parse_args()

    if args.offline:
        session, memory_id = offline_session()
        model: Any = reply_model(shown)
        region = "us-west-2"
    elif args.memory_id:
        session, memory_id, region = boto3.Session(region_name=args.region), args.memory_id, args.region
        model = args.model_id  # Strands builds a BedrockModel from a model id
    else:
        parser.print_help(sys.stderr)
        print("\nerror: pass --memory-id (real AWS, costs money) or --offline", file=sys.stderr)
        return 2

    config = AgentCoreMemoryConfig(
        memory_id=memory_id, session_id="recallwise-example", actor_id=args.actor, retrieval_config=NAMESPACES
    )
    options = {"decider": None} if args.stock else {}  # default: the offline embedded decider
    manager = GatedAgentCoreMemorySessionManager(config, region_name=region, boto_session=session, **options)
    agent = Agent(model=model, session_manager=manager, callback_handler=None)
    for turn in TURNS:
        print(f"> {turn}\n  {str(agent(turn)).strip()[:300]}")
    print()
    print(manager.stats.report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
