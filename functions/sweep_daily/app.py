"""EventBridge daily schedule: one day's importance decay for every context."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.composition import get_services
from agent_memory.domain.sweeps import DAILY, run_all
from agent_memory.observability import logger, metrics


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.info('daily sweep', extra={'schedule_time': event.get('time')})
    return run_all(get_services(), DAILY)
