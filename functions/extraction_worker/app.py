"""SQS extraction worker: one job = one context's turns; partial batch failures go back to the queue (then the DLQ)."""

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.composition import get_services
from agent_memory.domain.extraction_worker import handle_job
from agent_memory.observability import logger, metrics

# Every failed record is reported back (not an invocation error) so SQS retries exactly those messages.
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
get_services().embedder.warm()  # every job embeds its turns' chunks: load the model in the init phase


def record_handler(record: SQSRecord) -> None:
    receive_count = int(record.attributes.approximate_receive_count or 1)
    handle_job(get_services(), record.body, receive_count)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return dict(process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context))
